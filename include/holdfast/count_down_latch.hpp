// holdfast::CountDownLatch: Redisson's RCountDownLatch, byte-compatible with its data layout.
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

#include "holdfast/export.hpp"
#include "holdfast/client.hpp"
#include "holdfast/completion.hpp"
#include "holdfast/config.hpp"

namespace holdfast {

/// A distributed count-down latch: a Redis string under `name` holds the
/// count; waiters are released when it reaches 0. A Java service using
/// Redisson's RCountDownLatch on the same name shares it.
///
/// Unlike std::latch, the count is set after construction, once:
/// try_set_count() sets it only when the latch has none (no key), so one
/// party sets it and the others' calls are no-ops. The key is deleted when the
/// count reaches 0, so an absent latch is open (count 0) and can be set again.
///
/// Waiting: a waiter subscribes to `redisson_countdownlatch__channel__{name}`
/// and sleeps until a message; the `0` published when the count reaches 0
/// wakes every waiter. Nothing polls.
///
/// Errors: std::invalid_argument for an empty name, a count <= 0 or a
/// negative wait; WrongTypeError when the key holds another type or a string
/// that is not a count; ConnectionError when the server cannot be reached
/// within Config::timeout (naming it). A failed call leaves no subscription
/// behind.
///
/// Thread safety: a CountDownLatch may be shared by threads; it holds only the
/// name and a reference to its Client, which must outlive it.
class HOLDFAST_EXPORT CountDownLatch {
public:
    using Duration = std::chrono::milliseconds;

    CountDownLatch(Client& client, std::string name);

    /// The key in Redis: Config::key_prefix, then the name given.
    const std::string& name() const { return name_; }

    /// Sets the count to `count` (> 0) if the latch has none; true if it did.
    bool try_set_count(std::int64_t count);
    /// Decrements the count; at 0 the latch opens and every waiter wakes.
    /// Counting down an open latch does nothing.
    void count_down();
    /// The count now (0 when open).
    std::int64_t count() const;

    /// Waits as long as it takes for the count to reach 0.
    void await();
    /// As await(), until `stop` is requested: then false.
    bool await(std::stop_token stop);
    /// Waits up to `wait` (any unit, rounded up to ms); true if the latch opened.
    template <class Rep, class Period>
    bool await_for(const std::chrono::duration<Rep, Period>& wait) {
        return await_ms(detail::to_ms(wait), {});
    }
    /// Waits up to `wait`, or until `stop` is requested (false).
    template <class Rep, class Period>
    bool await_for(const std::chrono::duration<Rep, Period>& wait, std::stop_token stop) {
        return await_ms(detail::to_ms(wait), std::move(stop));
    }
    /// Waits until `deadline` on any clock; a deadline already past means look once.
    template <class Clock, class ClockDuration>
    bool await_until(const std::chrono::time_point<Clock, ClockDuration>& deadline) {
        return await_ms(detail::ms_until(deadline), {});
    }
    /// Waits until `deadline`, or until `stop` is requested (false).
    template <class Clock, class ClockDuration>
    bool await_until(const std::chrono::time_point<Clock, ClockDuration>& deadline, std::stop_token stop) {
        return await_ms(detail::ms_until(deadline), std::move(stop));
    }

    /// Async forms; the future completes on the client's event loop thread and
    /// throws what the blocking forms throw.
    std::future<bool> async_await(std::stop_token stop = {});
    std::future<bool> async_await_for(Duration wait, std::stop_token stop = {});
    std::future<void> async_count_down();
    std::future<std::int64_t> async_count() const;
    std::future<bool> async_try_set_count(std::int64_t count);

    /// Callback forms (docs/async.md): `done` runs once on the client's loop
    /// thread, with whether the latch opened (false: the wait passed, or
    /// `stop` was requested).
    void async_await_for(Duration wait, std::stop_token stop, Completion<bool> done);
    void async_await(std::stop_token stop, Completion<bool> done);
    void async_count_down(Completion<> done);
    /// count() and try_set_count(), not blocking.
    void async_count(Completion<std::int64_t> done) const;
    void async_try_set_count(std::int64_t count, Completion<bool> done);

private:
    bool await_ms(Duration wait, std::stop_token stop);
    /// nullopt wait: as long as it takes.
    void start_await(std::optional<Duration> wait, std::stop_token stop, Completion<bool> done);
    void start_count_down(std::function<void(std::exception_ptr)> done);

    Client* client_;
    std::string name_;
};

}  // namespace holdfast
