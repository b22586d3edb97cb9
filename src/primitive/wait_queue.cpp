#include "primitive/wait_queue.hpp"

#include <algorithm>

#include "primitive/names.hpp"

namespace holdfast::detail {

void WaitQueue::join(std::shared_ptr<Waiter> waiter, bool subscribed) {
    Waiter& joined = *waiter;
    const std::uint64_t id = joined.waiter_id();
    waiters_.push_back({next_ticket_++, id, std::move(waiter)});
    if (subscribed) joined.on_subscribed();
}

void WaitQueue::leave(const Waiter* waiter) {
    std::erase_if(waiters_, [waiter](const Entry& e) { return e.waiter.get() == waiter; });
}

void WaitQueue::hand_out(std::size_t count) { offer(count, 0); }

void WaitQueue::on_message(std::string_view payload) {
    const std::size_t count = wakes_(payload);
    if (count == wakes::named) {
        after_name_ = true;
        return named(waiter_named_in(payload));
    }
    // The `0` after a name is for those who were not named, since they could not be.
    const bool unlisted_only = after_name_ && count != wakes::all;
    after_name_ = false;
    offer(count, 0, unlisted_only);
}


void WaitQueue::pass_on(std::size_t count, const Waiter* after) {
    auto it = std::find_if(waiters_.begin(), waiters_.end(), [after](const Entry& e) { return e.waiter.get() == after; });
    if (it != waiters_.end()) offer(count, it->ticket);
}

WaitQueue::Entry* WaitQueue::next(std::uint64_t from, std::uint64_t end) {
    auto it = std::upper_bound(waiters_.begin(), waiters_.end(), from,
                               [](std::uint64_t ticket, const Entry& e) { return ticket < e.ticket; });
    return it != waiters_.end() && it->ticket < end ? &*it : nullptr;
}

// Walks by ticket rather than by position, so a waiter joining or leaving
// during a call neither shifts the walk nor gets what was not offered to it:
// the offer goes to those there when it began, in order, each at most once.
void WaitQueue::offer(std::size_t count, std::uint64_t from, bool unlisted_only) {
    const std::uint64_t end = next_ticket_;
    while (count > 0) {
        const Entry* e = next(from, end);
        if (!e) return;
        from = e->ticket;
        const auto waiter = e->waiter;  // kept alive while called: it may leave
        if (unlisted_only && e->waiter_id != 0) continue;
        if (waiter->on_wake() && count != wakes::all) --count;
    }
}

template <class Tell>
void WaitQueue::each(Tell tell) {
    const std::uint64_t end = next_ticket_;
    for (std::uint64_t from = 0;;) {
        const Entry* e = next(from, end);
        if (!e) return;
        from = e->ticket;
        const auto waiter = e->waiter;
        tell(*waiter);
    }
}

void WaitQueue::on_subscribed() {
    // (Re)subscribed: whatever followed the last name was missed.
    after_name_ = false;
    each([](Waiter& w) { w.on_subscribed(); });
}

template <class Tell>
void WaitQueue::let_go(Tell tell) {
    let_go_ = true;
    const auto waiters = std::move(waiters_);
    waiters_.clear();
    for (const auto& e : waiters) tell(*e.waiter);
}

void WaitQueue::on_closed() {
    let_go([](Waiter& w) { w.on_closed(); });
}

void WaitQueue::on_refused(const Failure& error) {
    let_go([&error](Waiter& w) { w.on_refused(error); });
}

void WaitQueue::named(std::uint64_t id) {
    std::shared_ptr<Waiter> chosen;
    for (const Entry& e : waiters_)
        if (e.waiter_id == id) chosen = e.waiter;
    // Named here, so alive: the others need not check on it. One that
    // declines is ending: its give-up passes the promise on.
    if (chosen) {
        chosen->on_wake();
        return;
    }
    if (unclaimed_) unclaimed_(id);
    // Named elsewhere, maybe dead: one listed waiter here checks later (one
    // per client and lock, not every waiter: a client may hold a million).
    for (const Entry& e : waiters_)
        if (e.waiter_id != 0) {
            const auto first = e.waiter;  // kept alive while called
            first->on_named_elsewhere();
            return;
        }
}

}  // namespace holdfast::detail
