// Waiting for a callback's result on the calling thread, for the blocking API.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace holdfast::detail {

/// One per thread, reused by every blocking call the thread makes. It outlives
/// each call, so the loop thread may still be inside unpark() when the
/// caller has already returned: that is why it is not on the caller's stack.
/// A late wake from an earlier call only wakes the next wait spuriously,
/// and the waiter re-checks the state.
///
/// A bare futex, not std::atomic::wait: libstdc++'s wait calls sched_yield()
/// several times before it sleeps, and with many threads parked on two cores
/// those yields were a fifth of the client's CPU time (a switch each). The
/// waiter marks itself asleep, so unpark() skips the wake syscall when the
/// result came before the caller parked.
class Parker {
public:
    static Parker& mine() {
        static thread_local Parker parker;
        return parker;
    }

    void reset() { state_.store(waiting, std::memory_order_relaxed); }

    void unpark() {
        if (state_.exchange(done, std::memory_order_acq_rel) == asleep) futex(FUTEX_WAKE_PRIVATE, 1);
    }

    void park() {
        std::uint32_t state = waiting;
        if (!state_.compare_exchange_strong(state, asleep, std::memory_order_acquire)) return;  // done already
        // Returns at once if unpark() changed the state since; re-checked after any wake.
        while (state_.load(std::memory_order_acquire) != done) futex(FUTEX_WAIT_PRIVATE, asleep);
    }

private:
    static constexpr std::uint32_t waiting = 0, done = 1, asleep = 2;

    void futex(int op, std::uint32_t value) {
        ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&state_), op, value, nullptr, nullptr, 0);
    }

    std::atomic<std::uint32_t> state_{waiting};
    static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
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
