// A client's wait queues: one WaitQueue per channel its waiters wait on, put
// on the subscriber with the channel's first waiter and taken off with its
// last. The primitive layer keeps them, so the subscriber only delivers
// messages and never has to tell which of its listeners is a queue.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "primitive/wait_queue.hpp"

namespace holdfast::detail {

class Subscriber;

/// Loop thread only.
class WaitQueues {
public:
    explicit WaitQueues(Subscriber& subscriber) : subscriber_(subscriber) {}
    WaitQueues(const WaitQueues&) = delete;
    WaitQueues& operator=(const WaitQueues&) = delete;

    /// `waiter` joins `channel`'s queue: the one there, or a new one that
    /// reads messages with `wakes`, added to the subscriber (SSUBSCRIBE if
    /// `sharded`). It is told on_subscribed() at once if the channel is
    /// listened to already. Returns the queue, to pass wake-ups on in.
    std::shared_ptr<WaitQueue> join(const std::string& channel, std::shared_ptr<Waiter> waiter, Wakes wakes,
                                    bool sharded);
    /// `waiter` leaves `channel`'s queue (no-op if it is not in it); the last
    /// one out takes the queue off the channel.
    void leave(const std::string& channel, const Waiter* waiter);

    /// Channels with a queue.
    std::size_t size() const { return queues_.size(); }

private:
    Subscriber& subscriber_;
    // A queue without waiters here was let go by the subscriber (closed,
    // refused): it is off its channel, and goes at the next join or leave.
    std::map<std::string, std::shared_ptr<WaitQueue>, std::less<>> queues_;
};

}  // namespace holdfast::detail
