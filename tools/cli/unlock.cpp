// holdfast unlock --force: break a lock whose holder is gone, or repair a
// semaphore whose permits were not given back.
#include <iostream>

#include "cli/cli.hpp"
#include "cli/duration.hpp"
#include "cli/inspect.hpp"
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

// A semaphore's repair: every permit taken (permit-expirable) is given back,
// each as its holder would give it back, so waiters wake; with --permits N
// the free count then becomes N. A holder is not told: a holdfast run finds
// its permit gone at its next renewal and stops its command.
int repair_semaphore(Client& client, const LockState& state, const UnlockOptions& options, const std::string& where) {
    const std::string& name = state.name;
    if (state.kind == Kind::counter && !options.permits) {
        warn("cannot force-unlock " + where + ": it is a semaphore (or a count-down latch) that keeps no record of "
             "who holds its permits (taken by Redisson's RSemaphore, or by holdfast 0.1's run --semaphore), so none "
             "can be taken back; `holdfast unlock --force --permits N " + printable(name) +
             "` sets its free count to N, and `holdfast status " + printable(name) + "` shows it now");
        return exit_code::failure;
    }
    PermitExpirableSemaphore semaphore(client, name);
    for (const auto& permit : state.permits) semaphore.try_release(permit.id);
    std::int64_t available = semaphore.available_permits();
    const std::int64_t before = available;
    if (options.permits) {
        semaphore.add_permits(*options.permits - available);
        available = semaphore.available_permits();
    }
    std::cout << printable(name) << ": repaired the semaphore\n";
    for (const auto& permit : state.permits) std::cout << "  took back permit: " << permit.id << '\n';
    if (options.permits) std::cout << "  free count set to " << *options.permits << " (was " << before << ")\n";
    std::cout << "  permits available: " << available << '\n';
    return exit_code::ok;
}

}  // namespace

int unlock(const GlobalOptions& global, const UnlockOptions& options) {
    if (!options.force) {
        warn("refusing to unlock " + detail::quoted(options.name) +
             ": a lock belongs to the process that took it, and this command is not that process, so it "
             "cannot release one hold the way the owner would. `holdfast unlock --force " + printable(options.name) +
             "` deletes the lock whoever holds it; the holder is not stopped and may still act as if it held it.");
        return exit_code::usage;
    }
    const Config config = make_config(global);
    Client client(config);
    const LockState state = inspect(client, options.name);
    const std::string where = detail::quoted(options.name) + " on " + config.server_name();
    switch (state.kind) {
        case Kind::counter:
        case Kind::permit_expirable_semaphore:
            return repair_semaphore(client, state, options, where);
        case Kind::free:
            if (options.permits) return repair_semaphore(client, state, options, where);
            break;
        case Kind::simple_lock:
            if (beyond_int64(state)) {
                warn("cannot force-unlock " + where + ": the key holds " + beyond_int64_description(state) +
                     ", not a lock; delete the key yourself");
                return exit_code::failure;
            }
            // Every SimpleLock key is set with an expiry; a string without one is someone's data.
            if (!state.ttl) {
                warn("cannot force-unlock " + where + ": the key is a string without an expiry, not a simple "
                     "lock (whose key always has one); pick another name or delete the key yourself");
                return exit_code::failure;
            }
            break;
        case Kind::not_a_primitive:
            warn("cannot force-unlock " + where + ": the key holds " + printable(state.description) +
                 ", not a lock; pick another name or delete the key yourself");
            return exit_code::failure;
        case Kind::lock:
        case Kind::read_write_lock:
            break;
    }
    if (options.permits && state.kind != Kind::free) {
        warn("--permits is for a semaphore, and " + where + " is a lock; leave it out to force-unlock the lock");
        return exit_code::usage;
    }
    if (!force_unlock(client, state)) {
        std::cout << printable(options.name) << ": was not locked; nothing deleted\n";
        return exit_code::ok;
    }
    std::cout << printable(options.name) << ": force-unlocked (deleted the lock and woke its waiters)\n";
    for (const auto& holder : state.holders)
        std::cout << "  was held by: " << printable(holder.owner) << (holder.writer ? " (writer, " : " (") << "hold count "
                  << holder.hold_count << ")\n";
    if (state.kind == Kind::simple_lock) std::cout << "  was held by token: " << printable(state.token) << '\n';
    return exit_code::ok;
}

}  // namespace holdfast::cli
