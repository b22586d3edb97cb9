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

    /// Waits as long as it takes for `permits` free permits, and takes them.
    /// 0 permits returns at once.
    void acquire(std::int64_t permits = 1);
    /// As acquire(), until `stop` is requested: then false, nothing taken.
    bool acquire(std::int64_t permits, std::stop_token stop);
    /// Takes `permits` if that many are free; never waits.
    bool try_acquire(std::int64_t permits = 1);
    /// Waits up to `wait` (a duration of any unit, rounded up to ms) for one permit.
    template <class Rep, class Period>
    bool try_acquire_for(const std::chrono::duration<Rep, Period>& wait) {
        return try_acquire_ms(1, detail::to_ms(wait), {});
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
    /// Waits until `deadline` for `permits`.
    template <class Clock, class ClockDuration>
    bool try_acquire_until(std::int64_t permits, const std::chrono::time_point<Clock, ClockDuration>& deadline) {
        return try_acquire_ms(permits, detail::ms_until(deadline), {});
    }

    /// Adds `permits` (>= 0) to the count and wakes waiters. Anyone may release.
    void release(std::int64_t permits = 1);
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

    /// Callback forms (docs/async.md): `done` runs once on the client's loop
    /// thread, with whether the permits were taken; a stop leaves none taken.
    void async_try_acquire(std::int64_t permits, Duration wait, std::stop_token stop, Completion<bool> done);
    void async_acquire(std::int64_t permits, std::stop_token stop, Completion<bool> done);
    void async_release(std::int64_t permits, Completion<> done);

private:
    friend class PermitExpirableSemaphore;
    using Done = std::function<void(std::exception_ptr error, bool acquired)>;

    /// `noun` names the primitive in errors ("semaphore").
    Semaphore(Client& client, std::string name, std::string_view noun);
    bool try_acquire_ms(std::int64_t permits, Duration wait, std::stop_token stop);
    /// Validates, then acquires; nullopt wait: as long as it takes.
    void start_acquire(std::int64_t permits, std::optional<Duration> wait, std::stop_token stop, Done done);
    void start_release(std::int64_t delta, std::string what, std::function<void(std::exception_ptr)> done);

    Client* client_;
    std::string name_;
    std::string_view noun_;
};

}  // namespace holdfast
