#include "primitive/alarm_clock.hpp"

#include <utility>

namespace holdfast::detail {

void AlarmClock::set(std::shared_ptr<Sleeper> sleeper, Clock::time_point at) {
    const std::size_t slot = sleeper->slot_;
    if (slot == Sleeper::unset) {
        heap_.emplace_back();
        sift_up(heap_.size() - 1, Entry{at, std::move(sleeper)});
    } else {
        Entry entry = std::move(heap_[slot]);
        const bool sooner = at < entry.at;
        entry.at = at;
        if (sooner) sift_up(slot, std::move(entry));
        else sift_down(slot, std::move(entry));
    }
    arm();
}

void AlarmClock::cancel(Sleeper& sleeper) {
    // The timer may be left due before the first alarm: it then finds
    // nothing due, and arms for the first.
    if (sleeper.slot_ != Sleeper::unset) remove(sleeper.slot_);
}

void AlarmClock::ring(Clock::time_point now) {
    ringing_ = true;
    while (!heap_.empty() && heap_.front().at <= now) {
        auto sleeper = remove(0);
        sleeper->on_alarm(now);  // may set or cancel alarms
    }
    ringing_ = false;
    arm();
}

void AlarmClock::place(std::size_t slot, Entry entry) {
    entry.sleeper->slot_ = slot;
    heap_[slot] = std::move(entry);
}

// The entry for `slot` (whose own is moved out) goes up to where it belongs.
void AlarmClock::sift_up(std::size_t slot, Entry entry) {
    while (slot > 0) {
        const std::size_t parent = (slot - 1) / 2;
        if (!(entry.at < heap_[parent].at)) break;
        place(slot, std::move(heap_[parent]));
        slot = parent;
    }
    place(slot, std::move(entry));
}

void AlarmClock::sift_down(std::size_t slot, Entry entry) {
    const std::size_t size = heap_.size();
    for (;;) {
        std::size_t child = 2 * slot + 1;
        if (child >= size) break;
        if (child + 1 < size && heap_[child + 1].at < heap_[child].at) ++child;
        if (!(heap_[child].at < entry.at)) break;
        place(slot, std::move(heap_[child]));
        slot = child;
    }
    place(slot, std::move(entry));
}

std::shared_ptr<AlarmClock::Sleeper> AlarmClock::remove(std::size_t slot) {
    auto sleeper = std::move(heap_[slot].sleeper);
    sleeper->slot_ = Sleeper::unset;
    Entry last = std::move(heap_.back());
    heap_.pop_back();
    if (slot < heap_.size()) {
        // The last entry fills the hole, up or down from there.
        if (slot > 0 && last.at < heap_[(slot - 1) / 2].at) sift_up(slot, std::move(last));
        else sift_down(slot, std::move(last));
    }
    // A million waiters gone leave no 24 MB behind.
    if (heap_.capacity() > 4096 && heap_.size() < heap_.capacity() / 4) heap_.shrink_to_fit();
    return sleeper;
}

// The timer waits for the first alarm. A wait due sooner is left running
// (it finds nothing due and arms again): alarms moved later, as every release
// moves a lock's listed waiters', cost no timer call.
void AlarmClock::arm() {
    if (ringing_ || heap_.empty()) return;
    const Clock::time_point first = heap_.front().at;
    if (armed_ && armed_at_ <= first) return;
    armed_ = true;
    armed_at_ = first;
    timer_.expires_at(first);
    timer_.async_wait([this, wait = ++waits_](asio::error_code ec) {
        // Cancelled: the clock may be gone (the loop stopped at shutdown).
        if (ec || wait != waits_) return;
        armed_ = false;
        ring(Clock::now());
    });
}

}  // namespace holdfast::detail
