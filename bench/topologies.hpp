// The deployments beside the single plain server: the same uncontended pairs
// over TLS and on a 3-master Redis Cluster, each with its own ceiling
// (redis-benchmark on the same servers in the same run).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ceiling.hpp"
#include "contended.hpp"
#include "uncontended.hpp"

namespace holdfast::bench {

/// A TLS redis-server (certificates made with openssl): the ceiling is
/// redis-benchmark --tls with the same CA, on the same server.
struct TlsCase {
    Ceiling ceiling;
    SingleThread single;
    double many_pairs_per_s = 0;
    std::optional<Contended> contended;  // Lock, when contended runs are chosen
};

/// A local cluster of 3 masters. Each master's ceiling is redis-benchmark
/// against that master alone, its keys in one of its slots (acquire runs only).
struct ClusterCase {
    std::vector<Ceiling> per_master;
    std::vector<std::size_t> names_per_master;  // of the many-thread run's names
    SingleThread single;                        // one name, so one master
    double many_pairs_per_s = 0;                // names spread over every master
    std::optional<Contended> contended;         // Lock on one master, when chosen
};

/// `processes` 0: no contended run. Each forks: call with no other threads running.
TlsCase run_tls_case(std::size_t threads, int processes, const Durations& durations);
ClusterCase run_cluster_case(std::size_t threads, int processes, const Durations& durations);

}  // namespace holdfast::bench
