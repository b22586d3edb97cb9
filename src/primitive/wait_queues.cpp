#include "primitive/wait_queues.hpp"

#include "transport/subscriber.hpp"

namespace holdfast::detail {

std::shared_ptr<WaitQueue> WaitQueues::join(const std::string& channel, std::shared_ptr<Waiter> waiter, Wakes wakes,
                                            bool sharded) {
    if (auto it = queues_.find(channel); it != queues_.end() && !it->second->empty()) {
        const auto queue = it->second;  // held: the waiter is told at once, and may leave
        queue->join(std::move(waiter), subscriber_.active(channel));
        return queue;
    }
    auto queue = std::make_shared<WaitQueue>(wakes);
    queues_.insert_or_assign(channel, queue);
    queue->join(std::move(waiter), false);
    subscriber_.add(channel, queue, sharded);
    return queue;
}

void WaitQueues::leave(const std::string& channel, const Waiter* waiter) {
    auto it = queues_.find(channel);
    if (it == queues_.end()) return;
    const auto queue = it->second;
    queue->leave(waiter);
    if (!queue->empty()) return;
    queues_.erase(it);
    // A no-op for a queue the subscriber let go already.
    subscriber_.remove(channel, queue.get());
}

}  // namespace holdfast::detail
