#include "stall_monitor.hpp"

#include <time.h>

namespace holdfast::check {

namespace {

constexpr Nanos nap = 2'000'000;

}  // namespace

StallMonitor::StallMonitor() : thread_([this] { watch(); }) {}

StallMonitor::~StallMonitor() { stop(); }

std::vector<Stall> StallMonitor::stop() {
    stopping_.store(true);
    if (thread_.joinable()) thread_.join();
    return stalls_;
}

void StallMonitor::watch() {
    const timespec pause{0, nap};
    for (Nanos before = now_ns(); !stopping_.load(); ) {
        ::nanosleep(&pause, nullptr);
        const Nanos after = now_ns();
        // The time lost: what the nap took beyond itself.
        if (after - before - nap >= least_stall) stalls_.push_back({before + nap, after});
        before = after;
    }
}

}  // namespace holdfast::check
