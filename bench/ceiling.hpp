// The ceiling: what redis-benchmark gets from the same server running
// holdfast's own acquire and release scripts, with no client library around them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

/// Where redis-benchmark goes, beyond the server's plain port.
struct CeilingTarget {
    std::uint16_t port = 0;                 // redis-benchmark's port; 0: the plain one
    std::vector<std::string> benchmark_args;  // e.g. --tls --cacert FILE
    std::string hash_tag;                   // a cluster node's: every key in one of its slots
    bool release = true;                    // also the two release runs
};

/// Loads the scripts (through the plain port), runs redis-benchmark (four
/// times, or two without the release runs) against 127.0.0.1, then deletes
/// the keys it made. Throws std::runtime_error if a run fails.
Ceiling measure_ceiling(std::uint16_t plain_port, const Durations& durations, const CeilingTarget& target = {});

}  // namespace holdfast::bench
