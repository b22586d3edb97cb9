// holdfast::PermitExpirableSemaphore: Redisson's RPermitExpirableSemaphore,
// byte-compatible with its data layout.
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
#include "holdfast/config.hpp"
#include "holdfast/semaphore.hpp"

namespace holdfast {

/// A distributed semaphore whose permits are named and leased: acquiring
/// returns a permit id, and a permit not released before its lease ends goes
/// back to the semaphore by itself, so a holder that dies cannot keep it.
///
/// In Redis: a string under `name` holds the free permits; the ZSET
/// `{name}:timeout` holds each taken permit's id (16 random bytes; the API
/// shows them as 32 lowercase hex digits, as Redisson does) scored by the end
/// of its lease in epoch ms (922337203685477: never). Every acquire first
/// returns the permits whose lease has ended. A Java service using Redisson's
/// RPermitExpirableSemaphore on the same name shares it; lease ends are
/// compared with the acquirer's clock, so hosts' clocks should agree.
///
/// Waiting: as Semaphore (channel `redisson_sc:{name}`), and a waiter also
/// wakes when the nearest lease ends, so a dead holder's permit is taken
/// without anyone releasing it.
///
/// Errors: std::invalid_argument for an empty name, a negative count or wait,
/// a lease <= 0 or a malformed permit id; NotOwnerError when releasing a
/// permit that is not held (its lease ended, or released already);
/// WrongTypeError when a key holds another type; ConnectionError.
///
/// Thread safety: as Semaphore. A permit id may be released from any thread
/// or process.
class HOLDFAST_EXPORT PermitExpirableSemaphore {
public:
    using Duration = std::chrono::milliseconds;

    PermitExpirableSemaphore(Client& client, std::string name);

    /// The key in Redis: Config::key_prefix, then the name given.
    const std::string& name() const { return counter_.name(); }

    /// Sets the free permits to `permits` (>= 0) if no count exists; true if it did.
    bool try_set_permits(std::int64_t permits) { return counter_.try_set_permits(permits); }
    /// Adds `delta` (either sign) to the free permits.
    void add_permits(std::int64_t delta) { counter_.add_permits(delta); }
    /// Free permits now, after returning those whose lease has ended.
    std::int64_t available_permits() const;

    /// Waits as long as it takes for a permit; returns its id. The permit
    /// returns to the semaphore `lease` after it was taken unless released
    /// first; nullopt: it never expires (Redisson's default).
    std::string acquire(std::optional<Duration> lease = std::nullopt);
    /// As acquire(), until `stop` is requested: then nullopt, nothing taken.
    std::optional<std::string> acquire(std::optional<Duration> lease, std::stop_token stop);
    /// A permit's id if one is free now; never waits.
    std::optional<std::string> try_acquire(std::optional<Duration> lease = std::nullopt);
    /// Waits up to `wait` (any unit, rounded up to ms).
    template <class Rep, class Period>
    std::optional<std::string> try_acquire_for(const std::chrono::duration<Rep, Period>& wait,
                                               std::optional<Duration> lease = std::nullopt) {
        return try_acquire_ms(detail::to_ms(wait), lease, {});
    }
    /// Waits up to `wait`, or until `stop` is requested (nullopt, nothing taken).
    template <class Rep, class Period>
    std::optional<std::string> try_acquire_for(const std::chrono::duration<Rep, Period>& wait,
                                               std::optional<Duration> lease, std::stop_token stop) {
        return try_acquire_ms(detail::to_ms(wait), lease, std::move(stop));
    }
    /// Waits until `deadline` on any clock; a deadline already past means try once.
    template <class Clock, class ClockDuration>
    std::optional<std::string> try_acquire_until(const std::chrono::time_point<Clock, ClockDuration>& deadline,
                                                 std::optional<Duration> lease = std::nullopt) {
        return try_acquire_ms(detail::ms_until(deadline), lease, {});
    }

    /// Returns the permit. Throws NotOwnerError if it is not held (never
    /// taken, released already, or its lease ended).
    void release(const std::string& permit_id);
    /// As release(), but false instead of NotOwnerError.
    bool try_release(const std::string& permit_id);
    /// Ends the held permit's lease `lease` from now; false if it is not held.
    bool update_lease(const std::string& permit_id, Duration lease);

    /// Async forms; the future completes on the client's event loop thread and
    /// throws what the blocking forms throw. `wait` zero means try once. The
    /// permit's id, or nullopt when none was taken (the wait passed, or `stop`
    /// was requested: async_acquire waits as long as it takes otherwise).
    std::future<std::optional<std::string>> async_try_acquire(Duration wait = Duration::zero(),
                                                              std::optional<Duration> lease = std::nullopt,
                                                              std::stop_token stop = {});
    std::future<std::optional<std::string>> async_acquire(std::optional<Duration> lease = std::nullopt,
                                                          std::stop_token stop = {});
    std::future<void> async_release(std::string permit_id);

    /// Callback forms (docs/async.md): `done` runs once on the client's loop
    /// thread, with the permit's id, or nullopt when none was taken (the wait
    /// passed, or `stop` was requested: then nothing is left taken).
    void async_try_acquire(Duration wait, std::optional<Duration> lease, std::stop_token stop,
                           Completion<std::optional<std::string>> done);
    void async_acquire(std::optional<Duration> lease, std::stop_token stop, Completion<std::optional<std::string>> done);
    void async_release(std::string permit_id, Completion<> done);

private:
    using Done = std::function<void(std::exception_ptr error, std::optional<std::string> permit_id)>;

    std::optional<std::string> try_acquire_ms(Duration wait, std::optional<Duration> lease, std::stop_token stop);
    void start_acquire(std::optional<Duration> wait, std::optional<Duration> lease, std::stop_token stop, Done done);
    void start_release(const std::string& permit_id, std::function<void(std::exception_ptr, bool released)> done);

    Semaphore counter_;  // the free-permit count, shared with the plain semaphore's scripts
    std::string timeouts_;
};

}  // namespace holdfast
