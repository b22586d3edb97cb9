// Contended: several processes, each with its own Client, take turns on one
// lock; the critical section is a read-modify-write that a broken lock would lose.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "holdfast/config.hpp"

namespace holdfast::bench {

/// The primitive the workers take turns on.
enum class Primitive { lock, fair_lock, semaphore };
std::string describe(Primitive primitive);

struct Contended {
    Primitive primitive = Primitive::lock;
    int processes = 0;
    int ready_at_start = 0;       // workers with their Client when the run started: the rest joined late
    double seconds = 0;           // first start to last unlock
    long long sections = 0;       // critical sections run, all processes
    long long handoffs = 0;       // sections whose holder differs from the previous one
    double sections_per_s = 0;
    double handoffs_per_s = 0;
    double wait_p50_us = 0;       // previous holder's unlock() call -> new holder's lock() return
    double wait_p99_us = 0;
    double longest_lock_ms = 0;   // longest single lock() call: starvation shows here, not in handoffs
    long long lock_commands = 0;  // top-level commands of holdfast (see contended.cpp)
    // After the warm-up (the first quarter of the run, when every process has
    // waited once and paid its SUBSCRIBE): what each owner change costs.
    double commands_per_handoff = 0;
    // The whole run, each process's first wait included.
    double commands_per_handoff_whole = 0;
    std::map<std::string, long long> command_calls;  // the same, per command
    long long counter = 0;        // final value of the counter the sections incremented
    long long lost_updates = 0;   // sections - counter: must be 0
};

/// Where the workers take their turns: each worker's Client connects with
/// `lock` (plain, TLS or a cluster); `port` is the plain TCP port of the server
/// that holds the lock and the counter (in a cluster: the master of their slot),
/// for the counter and INFO commandstats.
struct ContendedTarget {
    Config lock;
    std::uint16_t port = 0;
};

/// Forks `processes` workers for `duration`, each taking `primitive` (a
/// semaphore: one permit of one) around its section. Call it with no other
/// threads running (fork). Throws if a worker fails.
Contended run_contended(const ContendedTarget& target, Primitive primitive, int processes,
                        std::chrono::seconds duration);

/// The lock's name: its slot decides which cluster master serves the run.
extern const char* const contended_lock_name;

}  // namespace holdfast::bench
