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
#include <vector>

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
/// Leases: as Lock's, an overload, of any unit rounded up to ms (> 0, at most
/// max_duration); a permit taken without one never expires (Redisson's
/// default). The async members take std::optional<Duration>, nullopt for none.
///
/// Several permits: acquire(permits, ...) and the try_ forms with a count
/// take that many at once or none (Redisson's acquire(permits)), all with one
/// lease, and return their ids; an empty vector when none were taken.
///
/// Waiting: as Semaphore (channel `redisson_sc:{name}`), and a waiter also
/// wakes when the nearest lease ends, so a dead holder's permit is taken
/// without anyone releasing it.
///
/// Releasing, as every primitive releases (docs/design.md, "Releasing"):
/// release() is checked and throws NotOwnerError when a permit is not held;
/// try_release() is its quiet face, false instead of NotOwnerError.
///
/// Errors: std::invalid_argument for an empty name, a count or wait out of
/// range, a lease <= 0, or a malformed or repeated permit id; NotOwnerError
/// when releasing a permit that is not held (its lease ended, or released
/// already); WrongTypeError when a key holds another type; ConnectionError.
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
    /// As try_set_permits(permits), the count expiring `ttl` after it was set.
    template <class Rep, class Period>
    bool try_set_permits(std::int64_t permits, const std::chrono::duration<Rep, Period>& ttl) {
        return counter_.try_set_permits(permits, ttl);
    }
    /// Makes the total (free and taken) `permits` (>= 0): the free count moves
    /// by the difference, and may go below 0 while more are taken than that.
    void set_permits(std::int64_t permits);
    /// Adds `delta` (either sign) to the free permits.
    void add_permits(std::int64_t delta) { counter_.add_permits(delta); }
    /// Free permits now, after returning those whose lease has ended.
    std::int64_t available_permits() const;
    /// Permits taken now, after returning those whose lease has ended.
    std::int64_t acquired_permits() const;
    /// Free and taken together, after returning those whose lease has ended.
    std::int64_t permits() const;

    /// Waits as long as it takes for a permit; returns its id. Never expires.
    std::string acquire();
    /// As acquire(); the permit returns to the semaphore `lease` after it was
    /// taken unless released first.
    template <class Rep, class Period>
    std::string acquire(const std::chrono::duration<Rep, Period>& lease) {
        return *acquire_one(std::nullopt, detail::to_ms(lease), {});
    }
    /// As acquire(), until `stop` is requested: then nullopt, nothing taken.
    std::optional<std::string> acquire(std::stop_token stop);
    template <class Rep, class Period>
    std::optional<std::string> acquire(const std::chrono::duration<Rep, Period>& lease, std::stop_token stop) {
        return acquire_one(std::nullopt, detail::to_ms(lease), std::move(stop));
    }
    /// A permit's id if one is free now; never waits.
    std::optional<std::string> try_acquire();
    template <class Rep, class Period>
    std::optional<std::string> try_acquire(const std::chrono::duration<Rep, Period>& lease) {
        return acquire_one(Duration::zero(), detail::to_ms(lease), {});
    }
    /// Waits up to `wait` (any unit), or until `stop` is requested (nullopt, nothing taken).
    template <class Rep, class Period>
    std::optional<std::string> try_acquire_for(const std::chrono::duration<Rep, Period>& wait,
                                               std::stop_token stop = {}) {
        return acquire_one(detail::to_ms(wait), std::nullopt, std::move(stop));
    }
    template <class WaitRep, class WaitPeriod, class LeaseRep, class LeasePeriod>
    std::optional<std::string> try_acquire_for(const std::chrono::duration<WaitRep, WaitPeriod>& wait,
                                               const std::chrono::duration<LeaseRep, LeasePeriod>& lease,
                                               std::stop_token stop = {}) {
        return acquire_one(detail::to_ms(wait), detail::to_ms(lease), std::move(stop));
    }
    /// Waits until `deadline` on any clock; a deadline already past means try once.
    template <class Clock, class ClockDuration>
    std::optional<std::string> try_acquire_until(const std::chrono::time_point<Clock, ClockDuration>& deadline,
                                                 std::stop_token stop = {}) {
        return acquire_one(detail::ms_until(deadline), std::nullopt, std::move(stop));
    }
    template <class Clock, class ClockDuration, class LeaseRep, class LeasePeriod>
    std::optional<std::string> try_acquire_until(const std::chrono::time_point<Clock, ClockDuration>& deadline,
                                                 const std::chrono::duration<LeaseRep, LeasePeriod>& lease,
                                                 std::stop_token stop = {}) {
        return acquire_one(detail::ms_until(deadline), detail::to_ms(lease), std::move(stop));
    }

    /// `permits` (>= 1) at once or none, as the one-permit forms above: their
    /// ids, or an empty vector when none were taken (the wait passed, or
    /// `stop` was requested).
    std::vector<std::string> acquire(std::int64_t permits, std::stop_token stop = {}) {
        return acquire_many(permits, std::nullopt, std::nullopt, std::move(stop));
    }
    template <class Rep, class Period>
    std::vector<std::string> acquire(std::int64_t permits, const std::chrono::duration<Rep, Period>& lease,
                                     std::stop_token stop = {}) {
        return acquire_many(permits, std::nullopt, detail::to_ms(lease), std::move(stop));
    }
    std::vector<std::string> try_acquire(std::int64_t permits) {
        return acquire_many(permits, Duration::zero(), std::nullopt, {});
    }
    template <class Rep, class Period>
    std::vector<std::string> try_acquire(std::int64_t permits, const std::chrono::duration<Rep, Period>& lease) {
        return acquire_many(permits, Duration::zero(), detail::to_ms(lease), {});
    }
    template <class Rep, class Period>
    std::vector<std::string> try_acquire_for(std::int64_t permits, const std::chrono::duration<Rep, Period>& wait,
                                             std::stop_token stop = {}) {
        return acquire_many(permits, detail::to_ms(wait), std::nullopt, std::move(stop));
    }
    template <class WaitRep, class WaitPeriod, class LeaseRep, class LeasePeriod>
    std::vector<std::string> try_acquire_for(std::int64_t permits,
                                             const std::chrono::duration<WaitRep, WaitPeriod>& wait,
                                             const std::chrono::duration<LeaseRep, LeasePeriod>& lease,
                                             std::stop_token stop = {}) {
        return acquire_many(permits, detail::to_ms(wait), detail::to_ms(lease), std::move(stop));
    }
    template <class Clock, class ClockDuration>
    std::vector<std::string> try_acquire_until(std::int64_t permits,
                                               const std::chrono::time_point<Clock, ClockDuration>& deadline,
                                               std::stop_token stop = {}) {
        return acquire_many(permits, detail::ms_until(deadline), std::nullopt, std::move(stop));
    }
    template <class Clock, class ClockDuration, class LeaseRep, class LeasePeriod>
    std::vector<std::string> try_acquire_until(std::int64_t permits,
                                               const std::chrono::time_point<Clock, ClockDuration>& deadline,
                                               const std::chrono::duration<LeaseRep, LeasePeriod>& lease,
                                               std::stop_token stop = {}) {
        return acquire_many(permits, detail::ms_until(deadline), detail::to_ms(lease), std::move(stop));
    }

    /// Returns the permit. Throws NotOwnerError if it is not held (never
    /// taken, released already, or its lease ended).
    void release(const std::string& permit_id);
    /// Returns every permit, or none: NotOwnerError, nothing released, if any
    /// one is not held.
    void release(const std::vector<std::string>& permit_ids);
    /// As release(), but false instead of NotOwnerError. A permit whose lease
    /// ended but that nobody returned yet is returned all the same: false.
    bool try_release(const std::string& permit_id);
    bool try_release(const std::vector<std::string>& permit_ids);

    /// Ends the held permit's lease `lease` (any unit) from now; false if it
    /// is not held (or its lease ended).
    template <class Rep, class Period>
    bool update_lease(const std::string& permit_id, const std::chrono::duration<Rep, Period>& lease) {
        return update_lease_ms(permit_id, detail::to_ms(lease));
    }
    /// Time left on the permit's lease, as Lock::remaining_ttl(): nullopt when
    /// it is not held (or its lease ended), Duration::max() when it has no
    /// lease. Redisson's getLeaseTime.
    std::optional<Duration> remaining_ttl(const std::string& permit_id) const;

    /// Async forms; the future completes on the client's event loop thread and
    /// throws what the blocking forms throw. `wait` zero means try once;
    /// nullopt `lease` means none. The permit's id (the ids), or nullopt (an
    /// empty vector) when none was taken: the wait passed, or `stop` was
    /// requested (async_acquire waits as long as it takes otherwise).
    std::future<std::optional<std::string>> async_try_acquire(Duration wait = Duration::zero(),
                                                              std::optional<Duration> lease = std::nullopt,
                                                              std::stop_token stop = {});
    std::future<std::optional<std::string>> async_acquire(std::optional<Duration> lease = std::nullopt,
                                                          std::stop_token stop = {});
    std::future<std::vector<std::string>> async_try_acquire(std::int64_t permits, Duration wait = Duration::zero(),
                                                            std::optional<Duration> lease = std::nullopt,
                                                            std::stop_token stop = {});
    std::future<std::vector<std::string>> async_acquire(std::int64_t permits,
                                                        std::optional<Duration> lease = std::nullopt,
                                                        std::stop_token stop = {});
    std::future<void> async_release(std::string permit_id);
    std::future<void> async_release(std::vector<std::string> permit_ids);
    std::future<bool> async_try_release(std::string permit_id);
    std::future<bool> async_try_release(std::vector<std::string> permit_ids);
    std::future<bool> async_update_lease(std::string permit_id, Duration lease);
    std::future<std::optional<Duration>> async_remaining_ttl(std::string permit_id) const;
    std::future<bool> async_try_set_permits(std::int64_t permits, std::optional<Duration> ttl = std::nullopt);
    std::future<void> async_set_permits(std::int64_t permits);
    std::future<void> async_add_permits(std::int64_t delta);
    std::future<std::int64_t> async_available_permits() const;
    std::future<std::int64_t> async_acquired_permits() const;
    std::future<std::int64_t> async_permits() const;

    /// Callback forms (docs/async.md): `done` runs once on the client's loop
    /// thread, with what the future would hold; a stop leaves nothing taken.
    void async_try_acquire(Duration wait, std::optional<Duration> lease, std::stop_token stop,
                           Completion<std::optional<std::string>> done);
    void async_acquire(std::optional<Duration> lease, std::stop_token stop, Completion<std::optional<std::string>> done);
    void async_try_acquire(std::int64_t permits, Duration wait, std::optional<Duration> lease, std::stop_token stop,
                           Completion<std::vector<std::string>> done);
    void async_acquire(std::int64_t permits, std::optional<Duration> lease, std::stop_token stop,
                       Completion<std::vector<std::string>> done);
    void async_release(std::string permit_id, Completion<> done);
    void async_release(std::vector<std::string> permit_ids, Completion<> done);
    void async_try_release(std::string permit_id, Completion<bool> done);
    void async_try_release(std::vector<std::string> permit_ids, Completion<bool> done);
    void async_update_lease(std::string permit_id, Duration lease, Completion<bool> done);
    void async_remaining_ttl(std::string permit_id, Completion<std::optional<Duration>> done) const;
    void async_try_set_permits(std::int64_t permits, std::optional<Duration> ttl, Completion<bool> done);
    void async_set_permits(std::int64_t permits, Completion<> done);
    void async_add_permits(std::int64_t delta, Completion<> done);
    void async_available_permits(Completion<std::int64_t> done) const;
    void async_acquired_permits(Completion<std::int64_t> done) const;
    void async_permits(Completion<std::int64_t> done) const;

private:
    using Taken = Completion<std::vector<std::string>>;

    std::optional<std::string> acquire_one(std::optional<Duration> wait, std::optional<Duration> lease,
                                           std::stop_token stop);
    std::vector<std::string> acquire_many(std::int64_t permits, std::optional<Duration> wait,
                                          std::optional<Duration> lease, std::stop_token stop);
    bool update_lease_ms(const std::string& permit_id, Duration lease);
    /// Validates, then acquires `permits`; nullopt wait: as long as it takes.
    void start_acquire(std::int64_t permits, std::optional<Duration> wait, std::optional<Duration> lease,
                       std::stop_token stop, Taken done);
    /// Validates, then releases every id or none; `done` gets whether they were released.
    void start_release(const std::vector<std::string>& permit_ids, Completion<bool> done);
    /// The free and the taken permits, once ended leases are returned.
    void ask_counts(std::function<void(std::exception_ptr, std::int64_t free, std::int64_t taken)> done) const;

    Semaphore counter_;  // the free-permit count, shared with the plain semaphore's scripts
    std::string timeouts_;
};

}  // namespace holdfast
