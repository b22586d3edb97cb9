#include "primitive/wait_queues.hpp"

#include "transport/subscriber.hpp"

namespace holdfast::detail {

std::shared_ptr<WaitQueue> WaitQueues::join(const std::string& channel, std::shared_ptr<Waiter> waiter, Wakes wakes,
                                            bool sharded) {
    if (auto it = queues_.find(channel); it != queues_.end() && !it->second.queue->off_channel()) {
        const auto queue = it->second.queue;  // held: the waiter is told at once, and may leave
        queue->join(std::move(waiter), subscriber_.active(channel));
        return queue;
    }
    auto queue = std::make_shared<WaitQueue>(wakes);
    queues_.insert_or_assign(channel, Kept{queue});
    queue->join(std::move(waiter), false);
    subscriber_.add(channel, queue, sharded);
    return queue;
}

void WaitQueues::leave(const std::string& channel, const Waiter* waiter) {
    auto it = queues_.find(channel);
    if (it == queues_.end()) return;
    Kept& kept = it->second;
    const auto queue = kept.queue;
    queue->leave(waiter);
    if (!queue->empty()) return;
    if (queue->off_channel()) {
        queues_.erase(it);  // off its channel already
        return;
    }
    kept.emptied = sweeps_;
    if (!kept.idle_listed) {
        kept.idle_listed = true;
        idle_.push_back(channel);
    }
    arm_sweep();
}

void WaitQueues::sweep() {
    ++sweeps_;
    std::vector<std::string> still;
    for (std::string& channel : idle_) {
        auto it = queues_.find(channel);
        if (it == queues_.end()) continue;
        Kept& kept = it->second;
        if (!kept.queue->empty()) {
            kept.idle_listed = false;  // in use again: listed when next left empty
            continue;
        }
        // Left empty after the previous sweep: stays until the next.
        if (kept.emptied + 1 >= sweeps_ && !kept.queue->off_channel()) {
            still.push_back(std::move(channel));
            continue;
        }
        const auto queue = kept.queue;
        queues_.erase(it);
        subscriber_.remove(channel, queue.get());  // a no-op for a queue the subscriber let go
    }
    idle_ = std::move(still);
    if (!idle_.empty()) arm_sweep();
}

void WaitQueues::arm_sweep() {
    if (sweep_armed_) return;
    sweep_armed_ = true;
    sweeper_.expires_after(linger_);
    sweeper_.async_wait([this](asio::error_code ec) {
        sweep_armed_ = false;
        if (!ec) sweep();
    });
}

}  // namespace holdfast::detail
