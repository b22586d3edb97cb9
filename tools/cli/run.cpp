// holdfast run: a distributed flock(1). Take the lock, run the command in its
// own process group, release the lock when it exits, exit with its status.
#include <memory>

#include "cli/acquire.hpp"
#include "cli/duration.hpp"
#include "cli/hold.hpp"
#include "common/quoted.hpp"
#include "holdfast/holdfast.hpp"

namespace holdfast::cli {

int run_with_permit(Client& client, const Config& config, bool verbose, const RunOptions& options, Events& events,
                    const std::vector<int>& inherited);

namespace {

Acquisition acquire(Lock& lock, FencedLock* fenced, const std::string& owner, const RunOptions& options,
                    Events& events) {
    std::stop_source stop;
    const std::function<void(const Acquisition&)> give_back = [&](const Acquisition&) {
        try {
            lock.async_release(owner).get();
        } catch (const std::exception&) {
        }
    };
    // Without --wait: as long as it takes (no deadline), but still a wait a signal can stop.
    const Lock::Duration wait = options.wait.value_or(max_duration);
    if (fenced)
        return await(fenced->async_try_lock_and_get_token(owner, wait, options.lease, stop.get_token()).share(), stop,
                     give_back, events);
    return await(lock.async_try_lock(owner, wait, options.lease, stop.get_token()).share(), stop, give_back, events);
}

// Never throws: the command's status matters more than a failed release.
void release(Lock& lock, const std::string& owner) {
    try {
        lock.async_release(owner).get();
    } catch (const LeaseLostError&) {
        warn("the lock " + detail::quoted(lock.name()) +
             " was lost while the command ran (its process group was signalled then); released what was left of it");
    } catch (const NotOwnerError&) {
        warn("the lock " + detail::quoted(lock.name()) +
             " was no longer held when the command exited (lease ran out or force-unlocked); nothing to release");
    } catch (const std::exception& e) {
        warn("could not release the lock " + detail::quoted(lock.name()) + ": " + describe(e) +
             "; it frees itself when its lease runs out");
    }
}

// The lock type the options ask for.
std::unique_ptr<Lock> make_lock(Client& client, const RunOptions& options) {
    switch (options.primitive) {
        case Primitive::fair: return std::make_unique<FairLock>(client, options.name);
        case Primitive::spin: return std::make_unique<SpinLock>(client, options.name);
        case Primitive::fenced: return std::make_unique<FencedLock>(client, options.name);
        // The sides carry no state of their own: a Lock copy of one is that side.
        case Primitive::shared: return std::make_unique<Lock>(ReadWriteLock(client, options.name).read_lock());
        case Primitive::exclusive: return std::make_unique<Lock>(ReadWriteLock(client, options.name).write_lock());
        case Primitive::lock: break;
    }
    return std::make_unique<Lock>(client, options.name);
}

}  // namespace

int run(const GlobalOptions& global, const RunOptions& options) {
    const std::vector<int> inherited = open_descriptors();
    Events events;  // before the Client starts its threads, so they inherit the blocked signals
    const Config config = make_config(global);
    Client client(config);
    if (options.permits) return run_with_permit(client, config, global.verbose, options, events, inherited);
    const std::unique_ptr<Lock> held = make_lock(client, options);
    Lock& lock = *held;
    // An explicit owner: the hold does not depend on which thread asks.
    const std::string owner = client.new_owner();

    auto* fenced = options.primitive == Primitive::fenced ? static_cast<FencedLock*>(held.get()) : nullptr;
    const Acquisition acquisition = acquire(lock, fenced, owner, options, events);
    if (const auto status = unless_acquired(acquisition, options, "lock")) return *status;
    const std::string why_lost =
        options.lease ? "the " + format_duration(*options.lease) + " lease on " + detail::quoted(options.name) +
                            " is running out"
                      : "lost the lock " + detail::quoted(options.name) +
                            " (no renewal confirmed for a whole lease, or it expired or was force-unlocked)";
    // Taken now: once the watchdog has found the hold gone it no longer hands out the token.
    const Hold hold{owner,    acquisition.token, lock.lease_lost_token(owner), {},
                    why_lost, [&] { release(lock, owner); }};
    return hold_and_run(hold, options, events, inherited);
}

}  // namespace holdfast::cli
