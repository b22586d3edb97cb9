// Turns the measurements into one markdown report: figures, their ratio to
// the redis-benchmark ceiling, and the targets MET / NOT MET.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "capacity.hpp"
#include "ceiling.hpp"
#include "contended.hpp"
#include "topologies.hpp"
#include "uncontended.hpp"

namespace holdfast::bench {

/// Where a fresh clone's `./run test` time (minutes) can be given, e.g. from a CI log: not measured here.
inline constexpr const char* fresh_test_variable = "HOLDFAST_BENCH_FRESH_TEST_MINUTES";

/// A fresh clone's `./run test` time, given from outside (a CI log): the bench does not measure it.
struct FreshTest {
    double minutes = 0;
    std::string source;  // the variable it came from
};

/// What ran: the plain single server (ceiling, uncontended, then contended
/// when `contended` is not empty), and the TLS and cluster cases if chosen.
struct Results {
    bool plain = false;
    Ceiling ceiling;
    SingleThread single;
    std::size_t many_threads = 0;
    ManyPairs many;        // many_threads blocking threads
    ManyPairs many_async;  // as many async chains: the same pairs with no caller woken
    /// The same, Config::metrics on and off, in alternating rounds: what counting costs.
    double metrics_on_pairs_per_s = 0, metrics_off_pairs_per_s = 0;  // means over the rounds
    std::vector<double> metrics_round_ratios;                           // on ÷ off, per round
    std::optional<HeldLocks> held;     // with the plain server
    std::optional<Waiters> waiters;
    std::vector<Contended> contended;  // Lock first, then the other primitives
    std::vector<Contended> scaling;    // Lock and FairLock at more processes
    std::optional<FreshTest> fresh_test;
    std::optional<TlsCase> tls;
    std::optional<ClusterCase> cluster;
};

struct Machine {
    std::string date;  // UTC
    unsigned cores = 0;
    std::string cpu;
    std::string load;  // /proc/loadavg at the start: a busy machine skews everything
    std::string redis_version;
};

/// Date, cores, CPU model and load of this machine; the caller fills redis_version.
Machine describe_machine();

/// The whole BENCHMARKS.md text.
std::string render_report(const Results& results, const Machine& machine, bool quick);

/// False when a correctness check failed (lost updates), whatever the speed.
bool results_correct(const Results& results);

}  // namespace holdfast::bench
