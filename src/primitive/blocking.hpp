// Waiting for a callback's result on the calling thread, for the blocking API.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>

namespace holdfast::detail {

/// One per thread, reused by every blocking call the thread makes. It outlives
/// each call, so the loop thread may still be inside notify_one() when the
/// caller has already returned: that is why it is not on the caller's stack.
/// A late notify from an earlier call only wakes the next wait spuriously,
/// and the waiter re-checks the flag.
class Parker {
public:
    static Parker& mine() {
        static thread_local Parker parker;
        return parker;
    }

    void reset() { done_.store(0, std::memory_order_relaxed); }

    void unpark() {
        done_.store(1, std::memory_order_release);
        done_.notify_one();
    }

    void park() {
        while (done_.load(std::memory_order_acquire) == 0) done_.wait(0, std::memory_order_acquire);
    }

private:
    std::atomic<std::uint32_t> done_{0};
};

/// The result of an asynchronous operation, set on the loop thread and read
/// by the blocked caller. Cheaper than a std::promise: no shared state to
/// allocate, and no mutex for the woken caller to contend on.
template <class T>
class BlockingResult {
public:
    BlockingResult() : parker_(Parker::mine()) { parker_.reset(); }

    void set(std::exception_ptr error, T value) {
        error_ = std::move(error);
        value_ = std::move(value);
        Parker& parker = parker_;  // `this` may be gone once unparked
        parker.unpark();
    }

    T get() {
        parker_.park();
        if (error_) std::rethrow_exception(error_);
        return std::move(value_);
    }

private:
    Parker& parker_;
    std::exception_ptr error_;
    T value_{};
};

}  // namespace holdfast::detail
