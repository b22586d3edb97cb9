// How long the machine held the checker up: a thread that sleeps 2 ms at a
// time and writes down every wake-up that came late. On a machine busier
// than it has cores (a sanitizer suite beside the checker), a waiter can be
// late for the same reason; the wake-up check discounts that time
// (liveness.cpp), so its 100 ms promise still holds on a quiet machine.
#pragma once

#include <atomic>
#include <thread>
#include <vector>

#include "check.hpp"
#include "model.hpp"

namespace holdfast::check {

class StallMonitor {
public:
    /// A wake-up at least this much later than asked counts as a stall.
    static constexpr Nanos least_stall = 10'000'000;

    StallMonitor();
    ~StallMonitor();
    StallMonitor(const StallMonitor&) = delete;
    StallMonitor& operator=(const StallMonitor&) = delete;

    /// Stops watching; the stalls seen, by time.
    std::vector<Stall> stop();

private:
    void watch();

    std::atomic<bool> stopping_{false};
    std::vector<Stall> stalls_;  // the thread's alone until stop() joins it
    std::thread thread_;
};

}  // namespace holdfast::check
