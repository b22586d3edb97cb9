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

}  // namespace holdfast::bench
