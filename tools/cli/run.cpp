// holdfast run: a distributed flock(1). Take the lock, run the command as a
// child, release the lock when it exits, exit with its status.
#include <cstring>
#include <cstdlib>
#include <functional>
#include <memory>
#include <future>
#include <optional>
#include <stop_token>
#include <thread>
#include <type_traits>

#include "cli/cli.hpp"
#include "cli/duration.hpp"
#include "cli/process.hpp"
#include "common/quoted.hpp"
#include "holdfast/holdfast.hpp"

namespace holdfast::cli {
namespace {

using Clock = std::chrono::steady_clock;
using Kind = Events::Event::Kind;

enum class Outcome { acquired, timed_out, interrupted };
struct Acquisition {
    Outcome outcome;
    int signo = 0;
    std::optional<std::int64_t> token = std::nullopt;  // --fenced
};

std::string signal_name(int signo) {
    const char* abbrev = ::sigabbrev_np(signo);
    return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signo);
}

// The library's futures cannot call back, so a thread waits and wakes the
// event loop. Detached: an abandoned acquire completes only when the Client goes.
template <class T>
void notify_when_ready(std::shared_future<T> future, std::function<void()> notify) {
    std::thread([future = std::move(future), notify = std::move(notify)] {
        future.wait();
        notify();
    }).detach();
}

// Whether a finished acquire took the lock (and its token); throws what it failed with.
template <class T>
Acquisition outcome_of(const std::shared_future<T>& taken) {
    if constexpr (std::is_void_v<T>) {
        taken.get();
        return {Outcome::acquired};
    } else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) {
        const auto token = taken.get();
        return {token ? Outcome::acquired : Outcome::timed_out, 0, token};
    } else {
        return {taken.get() ? Outcome::acquired : Outcome::timed_out};
    }
}

// Waits for the acquire to finish, or for a signal to give up. Giving up
// stops the wait (a fair waiter leaves its queue, as a --wait timeout does)
// and waits for it to end; if the attempt then in flight took the lock after
// all, `release` gives it back.
// Without a `stop` (a semaphore's acquire cannot be stopped yet) holdfast
// leaves at once, and the acquire fails with the client.
template <class T>
Acquisition await(std::shared_future<T> taken, std::stop_source* stop, const std::function<void()>& release,
                  Events& events) {
    notify_when_ready(taken, events.notifier());
    for (;;) {
        const auto event = events.wait();
        if (event.kind == Kind::signal && event.signo != SIGCHLD) {
            if (!stop) return {Outcome::interrupted, event.signo};
            stop->request_stop();
            try {
                if (outcome_of(taken).outcome == Outcome::acquired) release();
            } catch (const std::exception&) {
                // Failed while giving up: nothing was taken that could be given back.
            }
            return {Outcome::interrupted, event.signo};
        }
        if (taken.wait_for(Clock::duration::zero()) != std::future_status::ready) continue;
        return outcome_of(taken);  // throws what the acquire failed with
    }
}

Acquisition acquire(Lock& lock, FencedLock* fenced, const std::string& owner, const RunOptions& options,
                    Events& events) {
    std::stop_source stop;
    const std::function<void()> release = [&] {
        try {
            lock.async_unlock(owner).get();
        } catch (const std::exception&) {
        }
    };
    // Without --wait: as long as it takes (no deadline), but still a wait a signal can stop.
    const Lock::Duration wait = options.wait.value_or(max_duration);
    if (fenced)
        return await(fenced->async_try_lock_and_get_token(owner, wait, options.lease, stop.get_token()).share(),
                      &stop, release, events);
    return await(lock.async_try_lock(owner, wait, options.lease, stop.get_token()).share(), &stop, release, events);
}

// A semaphore permit cannot be abandoned the way a lock hold can: releasing
// one not taken would add a permit. An acquire still pending when holdfast
// exits fails with the client; only one whose last attempt succeeded unseen
// in that instant would keep its permit (docs/cli.md).
Acquisition acquire_permit(Semaphore& semaphore, const RunOptions& options, Events& events) {
    if (options.wait) return await(semaphore.async_try_acquire(1, *options.wait).share(), nullptr, {}, events);
    return await(semaphore.async_acquire(1).share(), nullptr, {}, events);
}

// Stops the command when the lock is lost: the watchdog found it gone, or no
// renewal was confirmed for a whole lease, or an explicit lease is about to
// end. Either way another holder may get it next, so the command must stop
// before then. The callback runs on the client's thread; the child must not
// be reaped while this exists.
class LeaseGuard {
public:
    LeaseGuard(std::stop_token lease_lost, std::string why, const Child& child)
        : callback_(std::move(lease_lost), [why = std::move(why), &child] {
              warn(why + "; sending SIGTERM to the command");
              child.signal(SIGTERM);
          }) {}

private:
    std::stop_callback<std::function<void()>> callback_;
};

// Until the command exits, passing on the signals sent to holdfast. A
// terminal's ^C already reached the command through the process group, so it
// is not sent twice.
void wait_for_exit(const Child& child, Events& events) {
    while (!child.exited()) {
        const auto event = events.wait();
        if (event.kind == Kind::signal && event.signo != SIGCHLD && !event.from_terminal) child.signal(event.signo);
    }
}

// Never throws: the command's status matters more than a failed release.
void release(Lock& lock, const std::string& owner) {
    try {
        lock.async_unlock(owner).get();
    } catch (const LeaseLostError&) {
        warn("the lock " + detail::quoted(lock.name()) +
             " was lost while the command ran (it was sent SIGTERM then); released what was left of it");
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

// What the command runs under: a lock hold or a semaphore permit.
struct Hold {
    std::stop_token lost;             // requested when a lock's lease is found gone
    std::function<void()> release;    // after the command exits; warns on failure
};

int run_holding(const Hold& hold, const RunOptions& options, Events& events, const std::vector<int>& inherited,
                std::optional<std::int64_t> token) {
    // The child inherits the environment; no other thread reads it.
    if (token) ::setenv("HOLDFAST_TOKEN", std::to_string(*token).c_str(), 1);
    close_on_exec_except(inherited);
    std::optional<Child> child;
    try {
        child.emplace(Child::spawn(options.command, events.original_mask()));
    } catch (const SpawnError& e) {
        warn(e.what());
        hold.release();
        return e.exit_code;
    }
    {
        const std::string why = options.lease ? "the " + format_duration(*options.lease) + " lease on " +
                                                    detail::quoted(options.name) + " is running out"
                                              : "lost the lock " + detail::quoted(options.name) +
                                                    " (no renewal confirmed for a whole lease, or it expired "
                                                    "or was force-unlocked)";
        LeaseGuard guard(hold.lost, why, *child);
        wait_for_exit(*child, events);
    }
    const int status = child->reap();
    hold.release();
    return status;
}

// Ends holdfast run when the acquire did not hold anything; nullopt when it did.
std::optional<int> unless_acquired(const Acquisition& acquisition, const RunOptions& options, const std::string& what) {
    switch (acquisition.outcome) {
        case Outcome::timed_out:
            warn("timed out after " + format_duration(*options.wait) + " waiting for the " + what + " " +
                 detail::quoted(options.name) + "; the command was not run");
            return exit_code::timed_out;
        case Outcome::interrupted:
            warn(signal_name(acquisition.signo) + " while waiting for the " + what + " " + detail::quoted(options.name) +
                 "; the command was not run");
            return exit_code::signal_base + acquisition.signo;
        case Outcome::acquired:
            break;
    }
    return std::nullopt;
}

int run_with_permit(Client& client, const RunOptions& options, Events& events, const std::vector<int>& inherited) {
    Semaphore semaphore(client, options.name);
    semaphore.try_set_permits(*options.permits);
    const Acquisition acquisition = acquire_permit(semaphore, options, events);
    if (const auto status = unless_acquired(acquisition, options, "semaphore")) return *status;
    const Hold hold{{}, [&semaphore] {
                        try {
                            semaphore.async_release(1).get();
                        } catch (const std::exception& e) {
                            warn("could not give back the permit of the semaphore " + detail::quoted(semaphore.name()) + ": " +
                                 describe(e));
                        }
                    }};
    return run_holding(hold, options, events, inherited, std::nullopt);
}

}  // namespace

int run(const GlobalOptions& global, const RunOptions& options) {
    const std::vector<int> inherited = open_descriptors();
    Events events;  // before the Client starts its threads, so they inherit the blocked signals
    Client client(make_config(global));
    if (options.permits) return run_with_permit(client, options, events, inherited);
    const std::unique_ptr<Lock> held = make_lock(client, options);
    Lock& lock = *held;
    // An explicit owner: the hold does not depend on which thread asks.
    const std::string owner = client.new_owner();

    auto* fenced = options.primitive == Primitive::fenced ? static_cast<FencedLock*>(held.get()) : nullptr;
    const Acquisition acquisition = acquire(lock, fenced, owner, options, events);
    if (const auto status = unless_acquired(acquisition, options, "lock")) return *status;
    // Taken now: once the watchdog has found the hold gone it no longer hands out the token.
    const Hold hold{lock.lease_lost_token(owner), [&] { release(lock, owner); }};
    return run_holding(hold, options, events, inherited, acquisition.token);
}

}  // namespace holdfast::cli
