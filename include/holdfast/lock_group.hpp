// holdfast::LockGroup: the face MultiLock and RedLock share, a set of locks
// taken and released together.
#pragma once

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <optional>
#include <stop_token>

#include "holdfast/completion.hpp"
#include <string>
#include <string_view>
#include <vector>

#include "holdfast/export.hpp"
#include "holdfast/lock.hpp"

namespace holdfast {

namespace detail {
class Transport;
}

/// Base of MultiLock (all of its locks) and RedLock (a quorum of them): a fixed
/// set of Lock objects of any kinds, on any clients, acquired and released
/// together for one owner. This class supplies the blocking, std Lockable /
/// TimedLockable and async faces; the subclass supplies the rule.
///
/// Owners: the blocking members act for the calling thread, which on each
/// lock is that lock's client's Client::current_owner(). The async_ members
/// take one explicit owner id (Client::new_owner() of any client) and use it on
/// every lock.
///
/// Durations: as for Lock, any unit rounded up to ms; a lease at most
/// max_duration; a wait of max_duration or more has no deadline.
///
/// Errors: std::invalid_argument for an empty set, a lock given twice, a lease
/// <= 0 or above max_duration, a negative wait or an empty owner id;
/// otherwise what the members report, as documented by each subclass.
///
/// Thread safety: a group may be shared by threads. It refers to its Lock
/// objects and their clients, which must outlive it.
class HOLDFAST_EXPORT LockGroup : public detail::TimedTries<LockGroup> {
public:
    using Duration = std::chrono::milliseconds;

    virtual ~LockGroup();
    LockGroup(const LockGroup&) = delete;
    LockGroup& operator=(const LockGroup&) = delete;

    const std::vector<std::reference_wrapper<Lock>>& locks() const { return locks_; }

    /// Waits as long as it takes; renewed by a watchdog while held.
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
    /// held). Renewed by a watchdog while held.
    bool lock(std::stop_token stop);
    /// As lock(stop), held for `lease` (any unit), not renewed.
    template <class Rep, class Period>
    bool lock(const std::chrono::duration<Rep, Period>& lease, std::stop_token stop) {
        return acquire_blocking(std::nullopt, detail::to_ms(lease), std::move(stop));
    }
    /// Takes the group if it can at once; never waits.
    bool try_lock();
    // try_lock_for(wait[, lease][, stop]), try_lock_until(deadline[, lease][, stop]): see detail::TimedTries.
    /// Releases the calling thread's hold. Never throws (but std::logic_error
    /// on a member's event loop thread), as Lock::unlock(): each member whose
    /// release fails reports it (Event::Kind::release_failed, the metric, its
    /// lease-lost token), and no member stays renewed.
    void unlock();
    /// unlock(), checked: throws what went wrong, as documented by the subclass
    /// (the family's rule: docs/design.md, "Releasing").
    void release();

    /// Whether the calling thread holds the group, by the servers' word: as
    /// many of its locks held by the thread's owner id on each as the group
    /// needs (MultiLock: every one; RedLock: a quorum). A server that cannot
    /// answer counts as neither: the call throws its error only when the
    /// answers that came cannot decide.
    bool is_held_by_current_thread() const;
    /// As is_held_by_current_thread(), for `owner` (an id from Client::new_owner()).
    bool is_held_by(const std::string& owner) const;

    /// Requested when the calling thread's watchdog-renewed hold is lost; no
    /// stop state when it holds none.
    std::stop_token lease_lost_token() const;
    std::stop_token lease_lost_token(const std::string& owner) const;

    /// Async forms with an explicit owner used on every lock; the future
    /// completes on a client's event loop thread. `wait` zero means try once;
    /// nullopt lease means watchdog-renewed. The future throws what the
    /// blocking forms throw.
    std::future<bool> async_try_lock(std::string owner, Duration wait = Duration::zero(),
                                     std::optional<Duration> lease = std::nullopt, std::stop_token stop = {});
    std::future<bool> async_lock(std::string owner, std::optional<Duration> lease = std::nullopt,
                                 std::stop_token stop = {});
    std::future<void> async_release(std::string owner);
    std::future<bool> async_is_held_by(std::string owner) const;

    /// Callback forms, as Lock's (docs/async.md): `done` runs once on a
    /// client's loop thread; a stop leaves no member held.
    void async_try_lock(std::string owner, Duration wait, std::optional<Duration> lease, std::stop_token stop,
                        Completion<bool> done);
    void async_lock(std::string owner, std::optional<Duration> lease, std::stop_token stop, Completion<bool> done);
    void async_release(std::string owner, Completion<> done);
    void async_is_held_by(std::string owner, Completion<bool> done) const;

protected:
    /// Throws std::invalid_argument naming the problem: no locks, or one lock
    /// (a name on a server and database) given twice. `noun` names the group
    /// in errors ("multi-lock", "RedLock").
    LockGroup(std::vector<std::reference_wrapper<Lock>> locks, std::string noun);

    /// One owner id per lock, in locks() order.
    using Owners = std::vector<std::string>;
    using Acquired = std::function<void(std::exception_ptr error, bool acquired)>;
    using Released = std::function<void(std::exception_ptr error)>;

    /// Arguments already validated. `done` runs once, on some client's loop thread.
    virtual void acquire(Owners owners, std::optional<Duration> wait, std::optional<Duration> lease,
                         std::stop_token stop, Acquired done) = 0;
    virtual void start_release(Owners owners, Released done) = 0;
    virtual std::stop_token lost(const Owners& owners) const = 0;
    /// How many of its locks an owner must hold for the group to be held: by
    /// default every one (MultiLock).
    virtual std::size_t holds_needed() const { return locks_.size(); }

    /// "multi-lock 'a', 'b'": how errors name the group.
    const std::string& description() const { return description_; }

    /// The calling thread's owner id on each lock.
    Owners current_owners() const;
    /// `owner` on every lock; std::invalid_argument if it is empty.
    Owners same_owner(const std::string& owner) const;

private:
    friend class detail::TimedTries<LockGroup>;

    /// std::invalid_argument for a lease <= 0 or above max_duration, or a negative wait.
    void check(std::optional<Duration> wait, std::optional<Duration> lease) const;
    /// The transport a blocking call waits on; std::logic_error on any member's loop thread.
    detail::Transport& blocking_transport() const;

    bool try_lock_for_ms(Duration wait, std::optional<Duration> lease, std::stop_token stop);
    bool acquire_blocking(std::optional<Duration> wait, std::optional<Duration> lease, std::stop_token stop = {});
    /// Asks every lock whether its owner in `owners` holds it; `done` judges by holds_needed().
    void ask_held(Owners owners, Completion<bool> done) const;

    std::vector<std::reference_wrapper<Lock>> locks_;
    std::string description_;
};

}  // namespace holdfast
