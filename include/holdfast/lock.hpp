// holdfast::Lock: Redisson's reentrant RLock, byte-compatible with its data layout.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "holdfast/export.hpp"
#include "holdfast/client.hpp"
#include "holdfast/completion.hpp"
#include "holdfast/config.hpp"

namespace holdfast {

namespace detail {
class LockKind;
struct LockAccess;

/// The timed tries of the TimedLockable requirements, for Lock and LockGroup
/// alike: durations of any unit and deadlines on any clock, handed to
/// Derived::try_lock_for_ms(wait, lease, stop) in whole milliseconds. Every
/// form also comes with a lease, and with a std::stop_token.
template <class Derived>
class TimedTries {
public:
    using Duration = std::chrono::milliseconds;

    /// Waits up to `wait` (a duration of any unit, rounded up to ms). A wait
    /// of max_duration or more has no deadline.
    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
        return self().try_lock_for_ms(to_ms(wait), std::nullopt, {});
    }
    /// Waits up to `wait`, or until `stop` is requested: then false, and
    /// nothing taken is left held.
    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period>& wait, std::stop_token stop) {
        return self().try_lock_for_ms(to_ms(wait), std::nullopt, std::move(stop));
    }
    /// Waits up to `wait`; held for `lease`, not renewed.
    template <class WaitRep, class WaitPeriod, class LeaseRep, class LeasePeriod>
    bool try_lock_for(const std::chrono::duration<WaitRep, WaitPeriod>& wait,
                      const std::chrono::duration<LeaseRep, LeasePeriod>& lease) {
        return self().try_lock_for_ms(to_ms(wait), to_ms(lease), {});
    }
    /// Waits up to `wait`, or until `stop` is requested; held for `lease`, not renewed.
    template <class WaitRep, class WaitPeriod, class LeaseRep, class LeasePeriod>
    bool try_lock_for(const std::chrono::duration<WaitRep, WaitPeriod>& wait,
                      const std::chrono::duration<LeaseRep, LeasePeriod>& lease, std::stop_token stop) {
        return self().try_lock_for_ms(to_ms(wait), to_ms(lease), std::move(stop));
    }
    /// Waits until `deadline` on any clock; a deadline already past means try once.
    template <class Clock, class ClockDuration>
    bool try_lock_until(const std::chrono::time_point<Clock, ClockDuration>& deadline) {
        return self().try_lock_for_ms(ms_until(deadline), std::nullopt, {});
    }
    /// Waits until `deadline`, or until `stop` is requested: then false, and
    /// nothing taken is left held.
    template <class Clock, class ClockDuration>
    bool try_lock_until(const std::chrono::time_point<Clock, ClockDuration>& deadline, std::stop_token stop) {
        return self().try_lock_for_ms(ms_until(deadline), std::nullopt, std::move(stop));
    }
    /// Waits until `deadline`; held for `lease`, not renewed.
    template <class Clock, class ClockDuration, class LeaseRep, class LeasePeriod>
    bool try_lock_until(const std::chrono::time_point<Clock, ClockDuration>& deadline,
                        const std::chrono::duration<LeaseRep, LeasePeriod>& lease) {
        return self().try_lock_for_ms(ms_until(deadline), to_ms(lease), {});
    }
    /// Waits until `deadline`, or until `stop` is requested; held for `lease`, not renewed.
    template <class Clock, class ClockDuration, class LeaseRep, class LeasePeriod>
    bool try_lock_until(const std::chrono::time_point<Clock, ClockDuration>& deadline,
                        const std::chrono::duration<LeaseRep, LeasePeriod>& lease, std::stop_token stop) {
        return self().try_lock_for_ms(ms_until(deadline), to_ms(lease), std::move(stop));
    }

private:
    Derived& self() { return static_cast<Derived&>(*this); }
};
}  // namespace detail

/// A distributed reentrant lock stored as a Redis hash under `name`: field
/// `<owner id>` holds the hold count, the key's TTL is the lease. A Java
/// service using Redisson's RLock on the same name shares the lock.
///
/// Leases: without an explicit lease a hold gets Config::lock_watchdog_timeout
/// (30 s) and the client's watchdog renews it every third of that until the
/// final unlock, so a crashed holder frees the lock within one lease. With an
/// explicit lease nothing renews it: the lock expires when the lease runs out.
/// Either way the holder is told (lease_lost_token()) just before a lease it
/// could not renew ends.
///
/// Releasing, as every primitive releases (docs/design.md, "Releasing"):
/// release() is the checked release, which throws what went wrong, and
/// async_release() its async form. unlock() is the Lockable face: it never
/// throws, so std::lock_guard and std::scoped_lock are safe whatever happens
/// to the hold. An unlock that does not release (not held, lost, refused by
/// the server, no reply) is reported instead: an Event::Kind::release_failed,
/// the release_failures metric, and the lease-lost token of a hold the owner
/// still believed in. Either way a release that was tried ends the hold's
/// renewal, unless the owner still holds the lock reentrantly.
///
/// Waiting: a refused caller subscribes to the lock's channel (one
/// subscription per channel per client, shared by all its waiters), tries
/// again, and sleeps until an unlock message or the holder's TTL, whichever
/// comes first. Nothing polls.
///
/// Owners: the blocking members act for the calling thread (owner id
/// Client::current_owner()); they meet the Lockable and TimedLockable
/// requirements, so std::unique_lock and std::scoped_lock work. The async_
/// members take an explicit owner id (Client::new_owner()), for work that
/// hops threads.
///
/// Durations: any std::chrono unit, rounded up to milliseconds. A lease must
/// be > 0 and at most max_duration (100 years): Redis cannot store a longer
/// one. A wait must be >= 0; one of max_duration or more has no deadline.
///
/// Errors: std::invalid_argument for an empty name or owner, a lease <= 0 or
/// above max_duration, or a negative wait; WrongTypeError when the key holds
/// another type; ConnectionError when the server cannot be reached within
/// Config::timeout; ServerError for a refusal, e.g. NOPERM when the user's ACL
/// would let it take the lock but not release it (the acquire checks first).
/// release() throws as documented there. A failed call leaves no renewal and
/// no subscription behind.
///
/// Thread safety: a Lock object may be shared by threads; it holds only the
/// name and a reference to its Client, which must outlive it.
class HOLDFAST_EXPORT Lock : public detail::TimedTries<Lock> {
public:
    using Duration = std::chrono::milliseconds;

    Lock(Client& client, std::string name);
    /// Virtual: FairLock, SpinLock, FencedLock ... may be owned through a Lock pointer.
    virtual ~Lock() = default;
    Lock(const Lock&) = default;
    Lock& operator=(const Lock&) = default;

    /// The key in Redis: Config::key_prefix, then the name given.
    const std::string& name() const { return name_; }

    /// Waits as long as it takes; renewed by the watchdog.
    void lock();
    /// Waits as long as it takes; held for `lease`, not renewed. A lease must
    /// be > 0 and at most max_duration.
    void lock(Duration lease);
    /// Held for `lease` (any unit, rounded up to ms), not renewed.
    template <class Rep, class Period>
    void lock(const std::chrono::duration<Rep, Period>& lease) {
        lock(detail::to_ms(lease));
    }
    /// Waits until taken (true) or `stop` is requested (false, nothing left
    /// held): a std::jthread's token stops the wait. Renewed by the watchdog.
    bool lock(std::stop_token stop);
    /// As lock(stop), held for `lease` (any unit), not renewed.
    template <class Rep, class Period>
    bool lock(const std::chrono::duration<Rep, Period>& lease, std::stop_token stop) {
        return lock_ms(detail::to_ms(lease), std::move(stop));
    }
    /// Takes the lock if it is free (or already ours); never waits.
    bool try_lock();
    // try_lock_for(wait[, lease][, stop]), try_lock_until(deadline[, lease][, stop]): see detail::TimedTries.
    /// Releases one hold of the calling thread. Never throws, but
    /// std::logic_error on the client's event loop thread (a blocking call
    /// there would wait for itself); a release that fails is reported (see
    /// "Releasing" above).
    void unlock();
    /// unlock(), checked: throws NotOwnerError if the calling thread holds
    /// none (never locked, unlocked already, its lease ran out, or it was
    /// force-unlocked); LeaseLostError (a NotOwnerError) if its lease lapsed
    /// locally before this release (released all the same); ServerError
    /// (WrongTypeError ...) if the server refused it, nothing changed; and
    /// ConnectionError if no reply came, so whether it ran is unknown. In the
    /// last two cases the hold is no longer renewed: its lease ends it.
    void release();

    /// Deletes the lock whoever holds it and wakes the waiters. True if it was held.
    bool force_unlock();
    bool is_locked() const;
    bool is_held_by_current_thread() const;
    /// Whether `owner` (an id from Client::new_owner() or another client's) holds it.
    bool is_held_by(const std::string& owner) const;
    /// Holds of the calling thread (0 if none).
    std::int64_t hold_count() const;
    /// Holds of `owner` (0 if none).
    std::int64_t hold_count(const std::string& owner) const;
    /// Time left on the lease; nullopt when the lock is free.
    std::optional<Duration> remaining_ttl() const;

    /// Renews the calling thread's hold now, for `lease` (any unit): its
    /// lease then ends no earlier than `lease` from now (a watchdog-renewed
    /// hold: nor earlier than Config::lock_watchdog_timeout from now). For an
    /// explicit lease that is running out, say. True if the thread holds the
    /// lock; false, nothing changed, if not. The local lease deadline
    /// (lease_lost_token()) counts from this renewal.
    template <class Rep, class Period>
    bool extend_lease(const std::chrono::duration<Rep, Period>& lease) {
        return extend_lease_ms(detail::to_ms(lease));
    }

    struct Holder {
        std::string owner;
        std::int64_t hold_count;
    };
    /// Every owner holding the lock, with its hold count (empty when free).
    std::vector<Holder> holders() const;

    /// Requested when the calling thread's hold is lost: the watchdog found it
    /// gone (expired, force-unlocked, lost by the server), or its local lease
    /// deadline passed with no renewal confirmed (the server unreachable,
    /// paused or refusing; an explicit lease about to end), before the
    /// server's lease can end. Attach a std::stop_callback to be told; see
    /// docs/lock.md for the margin and for what fencing adds. A token without
    /// a stop state is returned when the owner holds no hold of the lock.
    std::stop_token lease_lost_token() const;
    std::stop_token lease_lost_token(const std::string& owner) const;

    /// Async forms with an explicit owner; the future completes on the
    /// client's event loop thread. `wait` zero means try once; nullopt lease
    /// means watchdog-renewed. The future throws what the blocking forms throw.
    /// `stop`, once requested, ends the wait as if its time were up (a fair
    /// waiter leaves its queue): false, and nothing left held (a hold the
    /// attempt then in flight took is given back first). async_lock waits as
    /// long as it takes, so only a stop makes it false.
    std::future<bool> async_try_lock(std::string owner, Duration wait = Duration::zero(),
                                     std::optional<Duration> lease = std::nullopt, std::stop_token stop = {});
    std::future<bool> async_lock(std::string owner, std::optional<Duration> lease = std::nullopt,
                                 std::stop_token stop = {});
    /// release() for `owner`: completes with the error it would throw, or none.
    std::future<void> async_release(std::string owner);
    /// extend_lease() for `owner`.
    std::future<bool> async_extend_lease(std::string owner, Duration lease);
    /// The queries and force_unlock(), not blocking.
    std::future<bool> async_force_unlock();
    std::future<bool> async_is_locked() const;
    std::future<std::int64_t> async_hold_count(std::string owner) const;
    std::future<std::optional<Duration>> async_remaining_ttl() const;
    std::future<std::vector<Holder>> async_holders() const;

    /// Callback forms (docs/async.md; holdfast/asio.hpp adapts them to Asio):
    /// `done` runs once on the client's loop thread, with whether the lock
    /// was taken. A wait ends untaken when `wait` passes or `stop` is
    /// requested; a stop leaves nothing behind (no hold, renewal, queue
    /// entry or subscription), giving back a hold taken as it landed.
    /// async_lock waits as long as it takes, so only a stop ends it untaken.
    void async_try_lock(std::string owner, Duration wait, std::optional<Duration> lease, std::stop_token stop,
                        Completion<bool> done);
    void async_lock(std::string owner, std::optional<Duration> lease, std::stop_token stop, Completion<bool> done);
    void async_release(std::string owner, Completion<> done);
    void async_extend_lease(std::string owner, Duration lease, Completion<bool> done);
    void async_force_unlock(Completion<bool> done);
    void async_is_locked(Completion<bool> done) const;
    void async_hold_count(std::string owner, Completion<std::int64_t> done) const;
    void async_remaining_ttl(Completion<std::optional<Duration>> done) const;
    void async_holders(Completion<std::vector<Holder>> done) const;

protected:
    /// The other members of the family (FairLock, SpinLock, FencedLock, the
    /// read-write lock's sides) are this class with another kind.
    Lock(Client& client, std::string name, const detail::LockKind& kind);

private:
    // Holds are taken and released through detail::LockAccess (src/lock), by
    // this class, its family and the compositions (MultiLock, RedLock).
    friend struct detail::LockAccess;
    friend class detail::TimedTries<Lock>;

    bool try_lock_for_ms(Duration wait, std::optional<Duration> lease, std::stop_token stop);
    bool lock_ms(Duration lease, std::stop_token stop);
    bool extend_lease_ms(Duration lease);

    Client* client_;
    std::string name_;
    const detail::LockKind* kind_;
};

}  // namespace holdfast
