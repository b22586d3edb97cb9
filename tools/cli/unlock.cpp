// holdfast unlock --force: break a lock whose holder is gone, or repair a
// semaphore whose permits were not given back.
#include <iostream>

#include "cli/cli.hpp"
#include "cli/duration.hpp"
#include "cli/inspect.hpp"
#include "cli/state_json.hpp"
#include "common/quoted.hpp"
#include "holdfast/holdfast.hpp"

namespace holdfast::cli {
namespace {

using Kind = LockState::Kind;
using detail::printable;

// Deletes the lock `state` shows, waking its waiters; false if it was gone already.
bool force_unlock(Client& client, const LockState& state) {
    const std::string& name = state.name;
    switch (state.kind) {
        case Kind::lock:  // waiters of a fair lock listen on their own channels: its own force-unlock wakes them
            return state.queue.empty() ? Lock(client, name).force_unlock() : FairLock(client, name).force_unlock();
        case Kind::read_write_lock: {
            ReadWriteLock rw(client, name);
            return (state.mode == "write" ? rw.write_lock() : rw.read_lock()).force_unlock();
        }
        case Kind::simple_lock: return SimpleLock(client, name).force_unlock();
        default: return false;
    }
}

// What unlock did.
struct Done {
    bool unlocked = false;                   // a lock deleted, or a semaphore repaired
    std::optional<std::int64_t> before;      // --permits: the free count before it was set
    std::optional<std::int64_t> available;   // a semaphore's free permits after
};

void print(const LockState& state, const Done& done, const UnlockOptions& options) {
    const bool semaphore = done.available.has_value();
    if (options.json) {
        nlohmann::json taken = nlohmann::json::array();
        for (const auto& permit : state.permits) taken.push_back(permit.id);
        std::cout << dump({{"name", state.name},
                           {"unlocked", done.unlocked},
                           {"was", to_json(state)},
                           {"permits_taken_back", std::move(taken)},
                           {"permits_available", semaphore ? nlohmann::json(*done.available) : nlohmann::json()}})
                  << '\n';
        return;
    }
    const std::string name = printable(state.name);
    if (semaphore) {
        std::cout << name << ": repaired the semaphore\n";
        for (const auto& permit : state.permits) std::cout << "  took back permit: " << permit.id << '\n';
        if (done.before) std::cout << "  free count set to " << *options.permits << " (was " << *done.before << ")\n";
        std::cout << "  permits available: " << *done.available << '\n';
    } else if (!done.unlocked) {
        std::cout << name << ": was not locked; nothing deleted\n";
    } else {
        std::cout << name << ": force-unlocked (deleted the lock and woke its waiters)\n";
        for (const auto& holder : state.holders)
            std::cout << "  was held by: " << printable(holder.owner) << (holder.writer ? " (writer, " : " (")
                      << "hold count " << holder.hold_count << ")\n";
        if (state.kind == Kind::simple_lock) std::cout << "  was held by token: " << printable(state.token) << '\n';
    }
}

// A semaphore's repair: every permit taken (permit-expirable) is given back,
// each as its holder would give it back, so waiters wake; with --permits N
// the free count then becomes N. A holder is not told: a holdfast run finds
// its permit gone at its next renewal and stops its command.
Done repair_semaphore(Client& client, const LockState& state, const UnlockOptions& options) {
    PermitExpirableSemaphore semaphore(client, state.name);
    for (const auto& permit : state.permits) semaphore.try_release(permit.id);
    Done done{true, std::nullopt, semaphore.available_permits()};
    if (options.permits) {
        done.before = done.available;
        semaphore.add_permits(*options.permits - *done.available);
        done.available = semaphore.available_permits();
    }
    return done;
}

// Why NAME cannot be force-unlocked as it is, or nullopt.
std::optional<std::string> refusal(const LockState& state, const UnlockOptions& options) {
    const std::string name = printable(state.name);
    switch (state.kind) {
        case Kind::counter:
            if (options.permits) break;
            return "it is a semaphore (or a count-down latch) that keeps no record of who holds its permits "
                   "(taken by Redisson's RSemaphore, or by holdfast 0.1's run --semaphore), so none can be taken "
                   "back; `holdfast unlock --force --permits N " + name + "` sets its free count to N, and "
                   "`holdfast status " + name + "` shows it now";
        case Kind::simple_lock:
            if (beyond_int64(state))
                return "the key holds " + beyond_int64_description(state) + ", not a lock; delete the key yourself";
            // Every SimpleLock key is set with an expiry; a string without one is someone's data.
            if (!state.ttl)
                return std::string("the key is a string without an expiry, not a simple lock (whose key always has "
                                   "one); pick another name or delete the key yourself");
            break;
        case Kind::multi_value_lock:
            return "it is a group of a multi-value lock (Redisson's getMultiLock(group, values)), which keeps only "
                   "hashes of its values, so this command cannot name them to free; the holders' code can "
                   "(MultiValueLock(client, group, values).force_unlock()), or `redis-cli DEL` frees every value "
                   "at once (waiters then wait out their holders' leases)";
        case Kind::not_a_primitive:
            return "the key holds " + printable(state.description) +
                   ", not a lock; pick another name or delete the key yourself";
        default:
            break;
    }
    return std::nullopt;
}

}  // namespace

int unlock(const GlobalOptions& global, const UnlockOptions& options) {
    if (!options.force)
        return fail(exit_code::usage,
                    "refusing to unlock " + detail::quoted(options.name) +
                        ": a lock belongs to the process that took it, and this command is not that process, so it "
                        "cannot release one hold the way the owner would. `holdfast unlock --force " +
                        printable(options.name) +
                        "` deletes the lock whoever holds it; the holder is not stopped and may still act as if it "
                        "held it.");
    const Config config = make_config(global);
    Client client(config);
    const LockState state = inspect(client, options.name);
    const std::string where = detail::quoted(options.name) + " on " + config.server_name();
    if (const auto why = refusal(state, options))
        return fail(exit_code::failure, "cannot force-unlock " + where + ": " + *why);
    const bool semaphore = state.kind == Kind::counter || state.kind == Kind::permit_expirable_semaphore;
    if (options.permits && !semaphore && state.kind != Kind::free)
        return fail(exit_code::usage,
                    "--permits is for a semaphore, and " + where + " is a lock; leave it out to force-unlock the lock");
    const Done done = semaphore || options.permits ? repair_semaphore(client, state, options)
                                                   : Done{force_unlock(client, state), std::nullopt, std::nullopt};
    print(state, done, options);
    return exit_code::ok;
}

}  // namespace holdfast::cli
