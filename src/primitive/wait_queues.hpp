// A client's wait queues: one WaitQueue per channel its waiters wait on, put
// on the subscriber with the channel's first waiter. A queue whose last
// waiter left stays subscribed a little while (one to two sweeps of the
// linger period): a contended lock's waiters come back at once, and would
// otherwise pay an UNSUBSCRIBE and a SUBSCRIBE each time. The primitive
// layer keeps them, so the subscriber only delivers messages and never has
// to tell which of its listeners is a queue.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/name_hash.hpp"
#include "primitive/alarm_clock.hpp"
#include "primitive/wait_queue.hpp"

namespace holdfast::detail {

class Subscriber;

/// Loop thread only.
class WaitQueues {
public:
    /// Empty queues are swept off their channels every `linger` on `loop`.
    WaitQueues(Subscriber& subscriber, asio::io_context& loop,
               std::chrono::milliseconds linger = std::chrono::milliseconds(1000))
        : subscriber_(subscriber), alarms_(loop), sweeper_(loop), linger_(linger) {}
    WaitQueues(const WaitQueues&) = delete;
    WaitQueues& operator=(const WaitQueues&) = delete;

    /// `waiter` joins `channel`'s queue: the one there, or a new one that
    /// reads messages with `wakes`, added to the subscriber (SSUBSCRIBE if
    /// `sharded`). It is told on_subscribed() at once if the channel is
    /// listened to already. Returns the queue, to pass wake-ups on in (and
    /// give it its hook for names no waiter answers to: WaitQueue::on_unclaimed).
    std::shared_ptr<WaitQueue> join(const std::string& channel, std::shared_ptr<Waiter> waiter, Wakes wakes,
                                    bool sharded);
    /// `waiter` leaves `channel`'s queue (no-op if it is not in it); a queue
    /// left empty stays on its channel until a sweep finds it empty twice.
    void leave(const std::string& channel, const Waiter* waiter);
    /// What the timer does every linger period; public for tests.
    void sweep();

    /// Channels with a queue.
    std::size_t size() const { return queues_.size(); }

    /// The one timer the waiters sleep on (their holders' TTLs, deadlines).
    AlarmClock& alarms() { return alarms_; }

private:
    struct Kept {
        std::shared_ptr<WaitQueue> queue;
        std::uint64_t emptied = 0;  // the sweep count when it was last left empty
        bool idle_listed = false;   // in idle_
    };

    void arm_sweep();

    Subscriber& subscriber_;
    // A queue the subscriber let go (closed, refused) is off its channel, and
    // goes at the next join or leave.
    std::unordered_map<std::string, Kept, NameHash, std::equal_to<>> queues_;
    std::vector<std::string> idle_;  // channels whose queue was left empty
    std::uint64_t sweeps_ = 0;
    AlarmClock alarms_;
    asio::steady_timer sweeper_;
    std::chrono::milliseconds linger_;
    bool sweep_armed_ = false;
};

}  // namespace holdfast::detail
