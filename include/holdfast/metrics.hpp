// Counters and histograms a Client keeps about its locks (docs/operations.md).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "holdfast/export.hpp"

namespace holdfast {

/// A distribution of durations, in Prometheus's shape: counts[i] observations
/// at most bounds[i] (not cumulative); the last count is above every bound.
struct HOLDFAST_EXPORT DurationHistogram {
    static constexpr std::size_t size = 19;
    /// Upper bounds of the buckets: 100 µs ... 300 s (5 min).
    static const std::array<std::chrono::microseconds, size> bounds;
    std::array<std::uint64_t, size + 1> counts{};
    std::uint64_t count = 0;
    std::chrono::microseconds sum{0};
};

/// Per kind of primitive ("lock", "fair_lock", "spin_lock", "fenced_lock",
/// "read_lock", "write_lock", "simple_lock", "semaphore",
/// "permit_expirable_semaphore", "count_down_latch", "non_reentrant_lock",
/// "non_reentrant_fair_lock", "multi_value_lock").
struct HOLDFAST_EXPORT PrimitiveMetrics {
    /// Acquire calls (lock, try_lock, acquire, await ...) by outcome: got it;
    /// gave up (a try refused, a wait timed out or stopped); failed (an error).
    std::uint64_t acquired = 0;
    std::uint64_t gave_up = 0;
    std::uint64_t failed = 0;
    /// How long acquires that got it waited, from the call to the grant.
    DurationHistogram acquire_wait;
    /// Callers waiting now (refused once, waiting for a release).
    std::int64_t waiting = 0;
    /// Locks only: from the first hold to the last unlock that released it.
    DurationHistogram hold_time;
    /// Locks only: holds the watchdog renewed, renewal commands that failed
    /// (counted per hold), and holds lost (found gone, or no renewal confirmed
    /// for a whole lease).
    std::uint64_t renewals = 0;
    std::uint64_t renewal_failures = 0;
    std::uint64_t leases_lost = 0;
    /// Unlocks (and releases) that did not release: not held, lost, refused
    /// by the server, or with their outcome unknown (Event::Kind::release_failed).
    std::uint64_t release_failures = 0;
};

/// A snapshot of a client's metrics since it was made (Client::metrics()).
struct HOLDFAST_EXPORT Metrics {
    /// Kinds used so far, by the names above.
    std::map<std::string, PrimitiveMetrics> primitives;
    std::uint64_t connections_lost = 0;
    /// Connections made again after a loss.
    std::uint64_t reconnects = 0;
    /// Scripts this client had loaded on a server, found gone there (NOSCRIPT:
    /// a restart, failover or SCRIPT FLUSH) and sent again.
    std::uint64_t scripts_reloaded = 0;
};

}  // namespace holdfast
