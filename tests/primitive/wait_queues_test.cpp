// A client's wait queues on a real subscriber whose connection never starts:
// which queue a waiter joins, and when a queue goes on and off the
// subscriber. No server (nothing is sent; the loop never runs).
#include "primitive/wait_queues.hpp"

#include <gtest/gtest.h>

#include <asio.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "holdfast/config.hpp"
#include "primitive/acquire.hpp"
#include "transport/connection.hpp"
#include "transport/subscriber.hpp"

namespace holdfast::detail {
namespace {

// Says what it was told, in a log its test shares.
class Told : public Waiter {
public:
    Told(std::string name, std::vector<std::string>& log) : name_(std::move(name)), log_(log) {}
    bool on_wake() override {
        log_.push_back(name_ + " woken");
        return true;
    }
    void on_subscribed() override { log_.push_back(name_ + " subscribed"); }
    void on_closed() override { log_.push_back(name_ + " closed"); }
    void on_refused(const Failure&) override { log_.push_back(name_ + " refused"); }

private:
    std::string name_;
    std::vector<std::string>& log_;
};

class WaitQueuesTest : public ::testing::Test {
protected:
    std::shared_ptr<Told> waiter(const std::string& name) { return std::make_shared<Told>(name, log); }
    std::shared_ptr<WaitQueue> join(const std::string& channel, const std::shared_ptr<Told>& w) {
        return queues.join(channel, w, redisson_lock_wakes, false);
    }

    // Queues kept, and channels on the subscriber.
    using Kept = std::pair<std::size_t, std::size_t>;
    Kept kept() const { return {queues.size(), subscriber.channel_count()}; }

    const std::string door = "redisson_lock__channel:{door}";
    const std::string gate = "redisson_lock__channel:{gate}";
    std::vector<std::string> log;
    asio::io_context io;
    Subscriber subscriber{io, std::make_shared<Connection>(io, Config{}), std::chrono::seconds(1)};
    WaitQueues queues{subscriber, io};
};

TEST_F(WaitQueuesTest, AChannelsWaitersShareOneQueueOnTheSubscriber) {
    auto a = waiter("a"), b = waiter("b");
    const auto queue = join(door, a);
    EXPECT_EQ(join(door, b), queue);
    EXPECT_EQ(queue->size(), 2u);
    EXPECT_EQ(kept(), Kept(1, 1));
    // The subscription is not active (no server): nobody was told it is.
    EXPECT_TRUE(log.empty());
    queue->on_message("1");  // as the subscriber delivers it: both hear it
    EXPECT_EQ(log, (std::vector<std::string>{"a woken", "b woken"}));
}

TEST_F(WaitQueuesTest, EachChannelHasAQueueOfItsOwn) {
    auto a = waiter("a"), b = waiter("b");
    EXPECT_NE(join(door, a), join(gate, b));
    EXPECT_EQ(kept(), Kept(2, 2));
}

TEST_F(WaitQueuesTest, TheQueueGoesWithItsLastWaiter) {
    auto a = waiter("a"), b = waiter("b");
    const auto queue = join(door, a);
    join(door, b);
    queues.leave(door, a.get());
    EXPECT_EQ(queue->size(), 1u);
    EXPECT_EQ(kept(), Kept(1, 1));
    queues.leave(door, b.get());
    EXPECT_TRUE(queue->empty());
    // Left on the channel until a sweep finds it empty twice.
    EXPECT_EQ(kept(), Kept(1, 1));
    queues.sweep();
    EXPECT_EQ(kept(), Kept(1, 1));
    queues.sweep();
    EXPECT_EQ(kept(), Kept(0, 0));
    // The next waiter gets a new queue, on the subscriber again.
    auto c = waiter("c");
    EXPECT_NE(join(door, c), queue);
    EXPECT_EQ(kept(), Kept(1, 1));
}

// A contended lock's waiters come back at once: the next one finds the queue
// still on the channel, and the sweeps start again when it leaves.
TEST_F(WaitQueuesTest, AWaiterSoonAfterTheLastOneGetsTheSameQueue) {
    auto a = waiter("a"), b = waiter("b");
    const auto queue = join(door, a);
    queues.leave(door, a.get());
    queues.sweep();
    EXPECT_EQ(join(door, b), queue);
    queues.sweep();
    queues.sweep();
    EXPECT_EQ(kept(), Kept(1, 1));  // in use: never swept
    queues.leave(door, b.get());
    queues.sweep();
    EXPECT_EQ(kept(), Kept(1, 1));
    queues.sweep();
    EXPECT_EQ(kept(), Kept(0, 0));
}

TEST_F(WaitQueuesTest, OneWhoIsNotInTheQueueLeavesItAsItIs) {
    auto a = waiter("a"), stranger = waiter("stranger");
    const auto queue = join(door, a);
    queues.leave(door, stranger.get());
    queues.leave(gate, a.get());
    EXPECT_EQ(queue->size(), 1u);
    EXPECT_EQ(kept(), Kept(1, 1));
}

// Closed, the subscriber lets its listeners go: the queue tells its waiters,
// is off the channel, and goes when the first of them leaves.
TEST_F(WaitQueuesTest, AQueueTheSubscriberLetGoGoesWithTheWaitersItLetGo) {
    auto a = waiter("a"), b = waiter("b");
    const auto queue = join(door, a);
    join(door, b);
    subscriber.stop_now();
    EXPECT_EQ(log, (std::vector<std::string>{"a closed", "b closed"}));
    EXPECT_TRUE(queue->empty());
    queues.leave(door, a.get());
    EXPECT_EQ(kept(), Kept(0, 0));
    queues.leave(door, b.get());
    EXPECT_EQ(kept(), Kept(0, 0));
}

// A waiter that comes before the let-go ones have left is not put in the
// queue that is off the channel: it gets a new one, on the subscriber.
TEST_F(WaitQueuesTest, AWaiterAfterALetGoGetsANewQueue) {
    auto a = waiter("a"), b = waiter("b");
    const auto old = join(door, a);
    subscriber.stop_now();
    const auto fresh = join(door, b);
    EXPECT_NE(fresh, old);
    EXPECT_EQ(fresh->size(), 1u);
    EXPECT_EQ(kept(), Kept(1, 1));
    // The let-go waiter leaving takes nothing from the new queue.
    queues.leave(door, a.get());
    EXPECT_EQ(fresh->size(), 1u);
    EXPECT_EQ(kept(), Kept(1, 1));
    queues.leave(door, b.get());
    queues.sweep();
    queues.sweep();
    EXPECT_EQ(kept(), Kept(0, 0));
}

}  // namespace
}  // namespace holdfast::detail
