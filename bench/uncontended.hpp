// Uncontended lock()+unlock() pairs through holdfast: nobody else wants the
// lock, so this is the library's own cost per pair on top of two round trips.
#pragma once

#include <chrono>
#include <cstddef>

#include "holdfast/config.hpp"

namespace holdfast::bench {

struct SingleThread {
    double pairs_per_s = 0;
    double p50_us = 0;  // one lock()+unlock() pair
    double p99_us = 0;
    long pairs = 0;
};

/// One thread, one lock, for `duration`.
SingleThread run_single_thread(const Config& config, std::chrono::seconds duration);

/// `threads` threads, each on its own lock, all sharing one Client; pairs/s in total.
double run_many_threads(const Config& config, std::size_t threads, std::chrono::seconds duration);

/// Who makes the pairs: blocking threads (lock(), unlock()), or chains of
/// async_lock -> async_release -> the next pair, run on the client's loop
/// thread, where no caller sleeps or is woken.
enum class Callers { threads, async_chains };

/// Many callers' pairs and what they cost: the CPU of this process (every
/// thread) and of the server per pair, over the same window.
struct ManyPairs {
    double pairs_per_s = 0;
    double client_us_per_pair = 0;
    double server_us_per_pair = 0;
};

/// `callers` callers of `form`, each on its own lock, sharing one Client,
/// on the plain server of config.port (read for its CPU).
ManyPairs run_many(const Config& config, std::size_t callers, std::chrono::seconds duration, Callers form);

}  // namespace holdfast::bench
