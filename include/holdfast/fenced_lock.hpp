// holdfast::FencedLock: Redisson's RFencedLock, a reentrant lock that hands out fencing tokens.
#pragma once

#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <stop_token>
#include <string>

#include "holdfast/export.hpp"
#include "holdfast/lock.hpp"

namespace holdfast {

/// A Lock (same layout, API and watchdog) whose every acquisition, re-entries
/// included, raises a counter `redisson_lock_token:{name}` and returns its new
/// value: a 64-bit token that rises with each grant. A lease can end while its
/// holder is paused (GC, SIGSTOP, a slow disk); the lock alone cannot stop such
/// a holder from writing late. The resource can: send the token with every
/// write and have the resource refuse a token lower than the highest it has
/// seen (docs/fenced_lock.md shows a Redis key guarded that way).
///
/// The counter never expires. It lives on the lock's server; holdfast's tokens
/// start from the server's clock, so a failover that lost the last ones does
/// not hand them out again (docs/design.md, "Fencing tokens across failover").
///
/// Thread safety: a FencedLock may be shared by threads, as a Lock: it holds
/// only the name and a reference to its Client, which must outlive it. Each
/// thread is its own owner (Client::current_owner()), so two threads of one
/// process exclude each other, and a token is handed to the thread that took
/// that hold; the async_ members act for the owner id they are given.
class HOLDFAST_EXPORT FencedLock : public Lock {
public:
    FencedLock(Client& client, std::string name);

    /// lock(), returning the token of this acquisition.
    std::int64_t lock_and_get_token();
    /// lock(lease), returning the token; `lease` of any unit, not renewed.
    template <class Rep, class Period>
    std::int64_t lock_and_get_token(const std::chrono::duration<Rep, Period>& lease) {
        return *try_lock_and_get_token_ms(std::nullopt, detail::to_ms(lease), {});
    }
    /// lock(stop), returning the token, or nullopt when `stop` ended the wait
    /// (nothing left held).
    std::optional<std::int64_t> lock_and_get_token(std::stop_token stop) {
        return try_lock_and_get_token_ms(std::nullopt, std::nullopt, std::move(stop));
    }
    /// lock(lease, stop), returning the token or nullopt; `lease` of any unit, not renewed.
    template <class Rep, class Period>
    std::optional<std::int64_t> lock_and_get_token(const std::chrono::duration<Rep, Period>& lease,
                                                   std::stop_token stop) {
        return try_lock_and_get_token_ms(std::nullopt, detail::to_ms(lease), std::move(stop));
    }
    /// try_lock(), returning the token, or nullopt when not acquired.
    std::optional<std::int64_t> try_lock_and_get_token();
    /// try_lock_for(wait[, stop]), returning the token, or nullopt when not
    /// acquired (the wait passed, or `stop` was requested). Any unit.
    template <class Rep, class Period>
    std::optional<std::int64_t> try_lock_and_get_token(const std::chrono::duration<Rep, Period>& wait,
                                                       std::stop_token stop = {}) {
        return try_lock_and_get_token_ms(detail::to_ms(wait), std::nullopt, std::move(stop));
    }
    /// try_lock_for(wait, lease[, stop]), returning the token or nullopt.
    template <class WaitRep, class WaitPeriod, class LeaseRep, class LeasePeriod>
    std::optional<std::int64_t> try_lock_and_get_token(const std::chrono::duration<WaitRep, WaitPeriod>& wait,
                                                       const std::chrono::duration<LeaseRep, LeasePeriod>& lease,
                                                       std::stop_token stop = {}) {
        return try_lock_and_get_token_ms(detail::to_ms(wait), detail::to_ms(lease), std::move(stop));
    }
    /// try_lock_until(deadline[, lease][, stop]), returning the token or
    /// nullopt. Any clock; a deadline already past means try once.
    template <class Clock, class ClockDuration>
    std::optional<std::int64_t> try_lock_and_get_token(const std::chrono::time_point<Clock, ClockDuration>& deadline,
                                                       std::stop_token stop = {}) {
        return try_lock_and_get_token_ms(detail::ms_until(deadline), std::nullopt, std::move(stop));
    }
    template <class Clock, class ClockDuration, class LeaseRep, class LeasePeriod>
    std::optional<std::int64_t> try_lock_and_get_token(const std::chrono::time_point<Clock, ClockDuration>& deadline,
                                                       const std::chrono::duration<LeaseRep, LeasePeriod>& lease,
                                                       std::stop_token stop = {}) {
        return try_lock_and_get_token_ms(detail::ms_until(deadline), detail::to_ms(lease), std::move(stop));
    }
    /// Async forms with an explicit owner (see Lock's async_ members): the
    /// token, or nullopt when not acquired (async_lock_and_get_token: only a
    /// stop ends it so).
    std::future<std::optional<std::int64_t>> async_lock_and_get_token(std::string owner,
                                                                     std::optional<Duration> lease = std::nullopt,
                                                                     std::stop_token stop = {});
    std::future<std::optional<std::int64_t>> async_try_lock_and_get_token(std::string owner,
                                                                         Duration wait = Duration::zero(),
                                                                         std::optional<Duration> lease = std::nullopt,
                                                                         std::stop_token stop = {});
    /// Callback forms (see Lock's): the token, or nullopt when not acquired.
    void async_try_lock_and_get_token(std::string owner, Duration wait, std::optional<Duration> lease,
                                      std::stop_token stop, Completion<std::optional<std::int64_t>> done);
    void async_lock_and_get_token(std::string owner, std::optional<Duration> lease, std::stop_token stop,
                                  Completion<std::optional<std::int64_t>> done);
    /// The latest token handed out (0 if none yet).
    std::int64_t token() const;
    std::future<std::int64_t> async_token() const;
    void async_token(Completion<std::int64_t> done) const;

private:
    /// nullopt wait: as long as it takes.
    std::optional<std::int64_t> try_lock_and_get_token_ms(std::optional<Duration> wait,
                                                          std::optional<Duration> lease, std::stop_token stop);
};

}  // namespace holdfast
