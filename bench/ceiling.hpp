// The ceiling: what redis-benchmark gets from the same server running
// holdfast's own acquire and release scripts, with no client library around them.
#pragma once

#include <cstdint>

#include "common.hpp"

namespace holdfast::bench {

/// One redis-benchmark run, from its --csv line.
struct BenchRun {
    double ops_per_s = 0;
    double p50_ms = 0;
    double p99_ms = 0;
};

struct Ceiling {
    BenchRun acquire_pipelined;  // -c 50 -P 16
    BenchRun release_pipelined;
    BenchRun acquire_serial;     // -c 1, no pipelining
    BenchRun release_serial;
};

/// Loads the scripts, runs redis-benchmark four times against 127.0.0.1:port,
/// then deletes the keys it made. Throws std::runtime_error if a run fails.
Ceiling measure_ceiling(std::uint16_t port, const Durations& durations);

}  // namespace holdfast::bench
