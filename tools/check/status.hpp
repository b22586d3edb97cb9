// A small file every process of a run maps: the coordinator's stop flag and,
// per worker slot, which lock the worker is inside the critical section of
// (or waiting for). The nemesis reads it to find a holder to kill, pause or
// cut off, or waiters to keep waiting.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "check.hpp"

namespace holdfast::check {

struct WorkerSlot {
    std::atomic<std::int32_t> holding{-1};  // lock index while in the critical section, else -1
    std::atomic<std::int64_t> acquisitions{0};
    std::atomic<std::int64_t> section_ends{0};  // now_ns() at which the planned critical section ends, else 0
    std::atomic<std::int32_t> waiting{-1};      // lock index while an acquire call of it is under way, else -1
    std::atomic<std::int64_t> waiting_since{0};  // now_ns() at which that call began
};

struct StatusPage {
    std::atomic<std::uint32_t> stop{0};  // set by the coordinator: finish the current hold and exit
    WorkerSlot slots[max_processes];
};
static_assert(std::atomic<std::int64_t>::is_always_lock_free, "shared across processes");

/// The mapping of a run's status file. Thread safety: the page holds only atomics.
class SharedStatus {
public:
    /// create: a new zeroed file (the coordinator); otherwise map an existing one.
    SharedStatus(const std::string& path, bool create);
    ~SharedStatus();
    SharedStatus(const SharedStatus&) = delete;
    SharedStatus& operator=(const SharedStatus&) = delete;

    StatusPage& page() { return *page_; }

private:
    StatusPage* page_ = nullptr;
};

}  // namespace holdfast::check
