// One timer for every waiter of a client. A waiter sleeps until a message,
// the holder's TTL or its deadline; an asio timer each (the timer, its
// pending wait and that wait's handler) cost about 200 bytes a waiter and a
// cancellation posted through the loop at each grant. Here a waiter's alarm
// is an entry in one binary heap (24 bytes, no allocation of its own), and
// the clock's one asio timer waits for the earliest. Loop thread only.
#pragma once

#include <asio/basic_waitable_timer.hpp>
#include <asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace holdfast::detail {

class AlarmClock {
public:
    using Clock = std::chrono::steady_clock;

    /// What an alarm wakes. The clock keeps a sleeper alive while its alarm
    /// is set, as a pending timer wait would.
    class Sleeper {
    public:
        /// Its alarm went off (now at or after the time set); the alarm is no
        /// longer set, and may be set again from here.
        virtual void on_alarm(Clock::time_point now) = 0;

    protected:
        Sleeper() = default;
        Sleeper(const Sleeper&) = delete;
        Sleeper& operator=(const Sleeper&) = delete;
        ~Sleeper() = default;

    private:
        friend class AlarmClock;
        static constexpr std::size_t unset = std::numeric_limits<std::size_t>::max();
        std::size_t slot_ = unset;  // its entry's index in the heap
    };

    explicit AlarmClock(asio::io_context& loop) : timer_(loop) {}
    AlarmClock(const AlarmClock&) = delete;
    AlarmClock& operator=(const AlarmClock&) = delete;

    /// Sets `sleeper`'s one alarm for `at`, moving it if set already.
    void set(std::shared_ptr<Sleeper> sleeper, Clock::time_point at);
    /// Unsets `sleeper`'s alarm (a no-op if none) and lets go of it: keep a
    /// reference if it must outlive the call.
    void cancel(Sleeper& sleeper);
    /// Whether `sleeper`'s alarm is set, and for when.
    static bool is_set(const Sleeper& sleeper) { return sleeper.slot_ != Sleeper::unset; }
    Clock::time_point due(const Sleeper& sleeper) const { return heap_[sleeper.slot_].at; }

    /// Alarms set, and room for them (shrunk as they go), for tests.
    std::size_t size() const { return heap_.size(); }
    std::size_t capacity() const { return heap_.capacity(); }
    /// Runs every alarm due by `now`; what the timer does, public for tests.
    void ring(Clock::time_point now);

private:
    struct Entry {
        Clock::time_point at;
        std::shared_ptr<Sleeper> sleeper;
    };

    void place(std::size_t slot, Entry entry);
    void sift_up(std::size_t slot, Entry entry);
    void sift_down(std::size_t slot, Entry entry);
    std::shared_ptr<Sleeper> remove(std::size_t slot);
    void arm();

    // A min-heap on `at`; each sleeper knows its slot.
    std::vector<Entry> heap_;
    // On the loop's own executor type, as the waiters' timers were.
    asio::basic_waitable_timer<Clock, asio::wait_traits<Clock>, asio::io_context::executor_type> timer_;
    bool armed_ = false;
    Clock::time_point armed_at_{};
    std::uint64_t waits_ = 0;  // a replaced wait's handler finds a later count
    bool ringing_ = false;     // in ring(): arm once at its end
};

}  // namespace holdfast::detail
