// What every part of lock_bench shares: run lengths, the clock, percentiles.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace holdfast::bench {

/// How long each measurement runs; --quick shortens all of them.
struct Durations {
    long pipelined_requests = 500'000;  // redis-benchmark -n for -c 50 -P 16
    long serial_requests = 30'000;      // redis-benchmark -n for -c 1
    std::chrono::seconds uncontended{3};
    std::chrono::seconds contended{5};
    std::chrono::seconds metrics_round{2};  // each half of a metrics-cost round
    std::chrono::seconds contended_scaling{3};  // each contended run at 32 and 128 processes
    std::size_t held_locks = 100'000;           // locks one Client holds at once
    std::size_t waiters = 1'000'000;            // waiters, on waiters / 10 locks (--waiters N): the target's count

    static Durations quick() {
        Durations d{100'000, 5'000, std::chrono::seconds(1), std::chrono::seconds(2), std::chrono::seconds(1)};
        d.contended_scaling = std::chrono::seconds(1);
        d.waiters = 10'000;
        return d;
    }
};

/// CLOCK_MONOTONIC in ns: steady_clock on Linux, so one process's reading
/// compares with another's on the same machine (the contended run needs that).
inline std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/// The p-th percentile (0..100) of `samples` by nearest rank; sorts them. 0 when empty.
inline double percentile(std::vector<std::int64_t>& samples, double p) {
    if (samples.empty()) return 0;
    std::sort(samples.begin(), samples.end());
    const auto rank = static_cast<std::size_t>(p / 100.0 * static_cast<double>(samples.size() - 1) + 0.5);
    return static_cast<double>(samples[std::min(rank, samples.size() - 1)]);
}

}  // namespace holdfast::bench
