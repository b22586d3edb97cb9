// holdfast::Semaphore: Redisson's RSemaphore, byte-compatible with its data layout.
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
#include <string_view>

#include "holdfast/export.hpp"
#include "holdfast/client.hpp"
#include "holdfast/completion.hpp"
#include "holdfast/config.hpp"

namespace holdfast {

class PermitExpirableSemaphore;

/// A distributed counting semaphore: a Redis string under `name` holds the
/// number of free permits. A Java service using Redisson's RSemaphore on the
/// same name shares it.
///
/// Permits have no owner, as with std::counting_semaphore and Redisson: any
/// caller may release, and a holder that dies keeps its permits forever
/// (PermitExpirableSemaphore gives each permit a lease instead). A semaphore
/// whose count was never set has no permits: set it once with
/// try_set_permits(), or grow it with release() / add_permits().
///
/// Waiting: a refused caller subscribes to `redisson_sc:{name}` (one
/// subscription per channel per client, shared by its waiters), tries again,
/// and sleeps until a message. A release publishes the new count, which wakes
/// up to that many of each client's waiters; nothing polls. Waiting is not
/// fair: whoever tries first after a release wins. A caller asking for more
/// permits than will ever be free waits until its deadline.
///
/// Errors: std::invalid_argument for an empty name, a negative permit count
/// or a negative wait; WrongTypeError when the key holds another type or a
/// string that is not a count; ConnectionError when the server cannot be
/// reached within Config::timeout (naming it). A failed call leaves no
/// subscription behind.
///
/// Thread safety: a Semaphore may be shared by threads; it holds only the
/// name and a reference to its Client, which must outlive it.
class HOLDFAST_EXPORT Semaphore {
public:
    using Duration = std::chrono::milliseconds;

    Semaphore(Client& client, std::string name);

    /// The key in Redis: Config::key_prefix, then the name given.
    const std::string& name() const { return name_; }

    /// Sets the count to `permits` (>= 0) if no count exists; true if it did.
    bool try_set_permits(std::int64_t permits);
    /// As try_set_permits(permits), the count then expiring `ttl` (> 0, any
    /// unit rounded up to ms) after it was set: the semaphore, permits taken
    /// or not, is gone with it (Redisson's trySetPermits(permits, ttl)).
    template <class Rep, class Period>
    bool try_set_permits(std::int64_t permits, const std::chrono::duration<Rep, Period>& ttl) {
        return try_set_permits_ms(permits, detail::to_ms(ttl));
    }

    /// Waits as long as it takes for `permits` free permits, and takes them.
    /// 0 permits returns at once.
    void acquire(std::int64_t permits = 1);
    /// As acquire(), until `stop` is requested: then false, nothing taken.
    bool acquire(std::int64_t permits, std::stop_token stop);
    /// One permit, until `stop` is requested.
    bool acquire(std::stop_token stop) { return acquire(1, std::move(stop)); }
    /// Takes `permits` if that many are free; never waits.
    bool try_acquire(std::int64_t permits = 1);
    /// Waits up to `wait` (a duration of any unit, rounded up to ms) for one permit.
    template <class Rep, class Period>
    bool try_acquire_for(const std::chrono::duration<Rep, Period>& wait) {
        return try_acquire_ms(1, detail::to_ms(wait), {});
    }
    /// Waits up to `wait` for one permit, or until `stop` is requested (false, nothing taken).
    template <class Rep, class Period>
    bool try_acquire_for(const std::chrono::duration<Rep, Period>& wait, std::stop_token stop) {
        return try_acquire_ms(1, detail::to_ms(wait), std::move(stop));
    }
    /// Waits up to `wait` for `permits`, or until `stop` is requested (false, nothing taken).
    template <class Rep, class Period>
    bool try_acquire_for(std::int64_t permits, const std::chrono::duration<Rep, Period>& wait,
                         std::stop_token stop = {}) {
        return try_acquire_ms(permits, detail::to_ms(wait), std::move(stop));
    }
    /// Waits until `deadline` on any clock for one permit; a deadline already
    /// past means try once.
    template <class Clock, class ClockDuration>
    bool try_acquire_until(const std::chrono::time_point<Clock, ClockDuration>& deadline) {
        return try_acquire_ms(1, detail::ms_until(deadline), {});
    }
    /// Waits until `deadline` for one permit, or until `stop` is requested.
    template <class Clock, class ClockDuration>
    bool try_acquire_until(const std::chrono::time_point<Clock, ClockDuration>& deadline, std::stop_token stop) {
        return try_acquire_ms(1, detail::ms_until(deadline), std::move(stop));
    }
    /// Waits until `deadline` for `permits`, or until `stop` is requested.
    template <class Clock, class ClockDuration>
    bool try_acquire_until(std::int64_t permits, const std::chrono::time_point<Clock, ClockDuration>& deadline,
                           std::stop_token stop = {}) {
        return try_acquire_ms(permits, detail::ms_until(deadline), std::move(stop));
    }

    /// Adds `permits` (>= 0) to the count and wakes waiters. Anyone may
    /// release: permits have no owner, so a release never finds nothing held
    /// and has no quiet form (docs/design.md, "Releasing"); it throws what
    /// the server refused, or ConnectionError.
    void release(std::int64_t permits = 1);
    /// release(), only if the semaphore has a count: false, nothing changed,
    /// when it has none (never set, drained by its TTL, deleted), where
    /// release() would make one. Redisson's releaseIfExists. 0 permits: false.
    bool release_if_exists(std::int64_t permits = 1);
    /// Adds `delta` to the count; a negative delta takes permits away (the
    /// count may go below 0, and then nobody acquires until it is back above).
    void add_permits(std::int64_t delta);
    /// Takes every free permit; returns how many that was (0 without a count).
    std::int64_t drain_permits();
    /// Free permits now (0 when no count is set).
    std::int64_t available_permits() const;

    /// Async forms; the future completes on the client's event loop thread and
    /// throws what the blocking forms throw. `wait` zero means try once; a
    /// requested `stop` ends the wait with false, nothing taken (async_acquire
    /// waits as long as it takes, so only a stop makes it false).
    std::future<bool> async_try_acquire(std::int64_t permits = 1, Duration wait = Duration::zero(),
                                        std::stop_token stop = {});
    std::future<bool> async_acquire(std::int64_t permits = 1, std::stop_token stop = {});
    std::future<void> async_release(std::int64_t permits = 1);
    std::future<bool> async_release_if_exists(std::int64_t permits = 1);
    /// The others, not blocking: a nullopt `ttl` sets a count that never expires.
    std::future<bool> async_try_set_permits(std::int64_t permits, std::optional<Duration> ttl = std::nullopt);
    std::future<void> async_add_permits(std::int64_t delta);
    std::future<std::int64_t> async_drain_permits();
    std::future<std::int64_t> async_available_permits() const;

    /// Callback forms (docs/async.md): `done` runs once on the client's loop
    /// thread, with whether the permits were taken; a stop leaves none taken.
    void async_try_acquire(std::int64_t permits, Duration wait, std::stop_token stop, Completion<bool> done);
    void async_acquire(std::int64_t permits, std::stop_token stop, Completion<bool> done);
    void async_release(std::int64_t permits, Completion<> done);
    void async_release_if_exists(std::int64_t permits, Completion<bool> done);
    void async_try_set_permits(std::int64_t permits, std::optional<Duration> ttl, Completion<bool> done);
    void async_add_permits(std::int64_t delta, Completion<> done);
    void async_drain_permits(Completion<std::int64_t> done);
    void async_available_permits(Completion<std::int64_t> done) const;

private:
    friend class PermitExpirableSemaphore;
    using Done = std::function<void(std::exception_ptr error, bool acquired)>;

    /// `noun` names the primitive in errors ("semaphore").
    Semaphore(Client& client, std::string name, std::string_view noun);
    bool try_acquire_ms(std::int64_t permits, Duration wait, std::stop_token stop);
    bool try_set_permits_ms(std::int64_t permits, Duration ttl);
    /// Validates, then acquires; nullopt wait: as long as it takes.
    void start_acquire(std::int64_t permits, std::optional<Duration> wait, std::stop_token stop, Done done);
    /// release() (`if_exists`: release_if_exists()), validated.
    void release_counted(std::int64_t permits, bool if_exists, Completion<bool> done);
    /// Adds `delta`; `if_exists`: only to a count that exists. `done` gets
    /// whether it added (false: no count, with `if_exists`).
    void start_release(std::int64_t delta, bool if_exists, std::string what, Completion<bool> done);

    Client* client_;
    std::string name_;
    std::string_view noun_;
};

}  // namespace holdfast
