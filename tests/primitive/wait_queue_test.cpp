// The wait queue on its own: messages in, wake-ups out in join order, with
// the real per-primitive message policies. No server.
#include "primitive/wait_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "primitive/acquire.hpp"
#include "semaphore/channel.hpp"

namespace holdfast::detail {
namespace {

using Log = std::vector<std::string>;

// Records what it is told in a log shared by the test's waiters; uses a
// wake-up unless `decline` says otherwise.
class Recorder : public Waiter {
public:
    Recorder(std::string name, Log& log) : name(std::move(name)), log_(log) {}

    bool on_wake() override {
        log_.push_back(name);
        if (then) then();
        return !decline;
    }
    std::uint64_t waiter_id() const override { return id; }
    void on_named_elsewhere() override { log_.push_back(name + " elsewhere"); }
    void on_subscribed() override { log_.push_back(name + " subscribed"); }
    void on_closed() override { log_.push_back(name + " closed"); }
    void on_refused(const detail::Failure&) override { log_.push_back(name + " refused"); }

    const std::string name;
    std::uint64_t id = 0;  // listed for targeted wake-ups under this id, if not 0
    bool decline = false;
    std::function<void()> then;  // runs while it is woken

private:
    Log& log_;
};

class WaitQueueTest : public ::testing::Test {
protected:
    /// A waiter listed under `id` (0: not listed) joins.
    std::shared_ptr<Recorder> add(const std::string& name, bool subscribed = false, std::uint64_t id = 0) {
        auto waiter = std::make_shared<Recorder>(name, log);
        waiter->id = id;
        queue.join(waiter, subscribed);
        return waiter;
    }

    Log log;
    WaitQueue queue{redisson_lock_wakes};
};

// Targeted wake-ups (lock/handoff.lua.part): a release names the waiter it
// promised the lock to, then publishes Redisson's `0`.
TEST_F(WaitQueueTest, ANamedWaiterHereAloneIsWoken) {
    add("a", false, 100);
    add("b", false, 200);
    add("unlisted");
    queue.on_message("200");
    EXPECT_EQ(log, Log{"b"});  // named here, so alive: nobody checks on it
}

// Named in another process: one listed waiter here checks later (the first),
// not every one (a client may hold a million waiters).
TEST_F(WaitQueueTest, ANameElsewhereIsToldToTheFirstListedWaiterOnly) {
    add("unlisted");
    add("a", false, 100);
    add("b", false, 200);
    queue.on_message("300");
    EXPECT_EQ(log, Log{"a elsewhere"});
}

TEST_F(WaitQueueTest, TheZeroAfterANameWakesOnlyWaitersThatAreNotListed) {
    add("a", false, 100);
    add("unlisted");
    queue.on_message("200");  // another process's waiter
    queue.on_message("0");
    EXPECT_EQ(log, (Log{"a elsewhere", "unlisted"}));
    // A bare `0` (a Redisson client's release) wakes the first waiter, listed or not.
    log.clear();
    queue.on_message("0");
    EXPECT_EQ(log, Log{"a"});
}

// Resubscribed between a name and its `0`: the next `0` may be a Redisson
// release's, and must wake a listed waiter.
TEST_F(WaitQueueTest, AResubscriptionForgetsTheLastName) {
    add("a", false, 100);
    queue.on_message("200");
    queue.on_subscribed();
    log.clear();
    queue.on_message("0");
    EXPECT_EQ(log, Log{"a"});
}

// A name no waiter here answers to goes to the queue's hook (a waiter of
// this client that left without unlisting: its promise is passed on there).
TEST_F(WaitQueueTest, ANameNobodyHereAnswersToGoesToTheHook) {
    std::vector<std::uint64_t> unclaimed;
    queue.on_unclaimed([&](std::uint64_t id) { unclaimed.push_back(id); });
    add("a", false, 100);
    queue.on_message("100");
    queue.on_message("0");
    queue.on_message("300");
    queue.on_message("0");
    EXPECT_EQ(unclaimed, std::vector<std::uint64_t>{300});
    EXPECT_EQ(log, (Log{"a", "a elsewhere"}));
}

TEST_F(WaitQueueTest, OnlyNumbersFromTwoUpNameAWaiter) {
    add("a", false, 2);
    add("b", false, 3);
    // Not names: woken as a message wakes (the first waiter, or all for `1`), never `b` alone.
    for (const char* payload : {"1", "3x", "-3", "", "18446744073709551619"}) {
        log.clear();
        queue.on_message(payload);
        EXPECT_NE(log, Log{"b"}) << payload;
    }
    log.clear();
    queue.on_message("3");
    EXPECT_EQ(log, Log{"b"});
}

TEST_F(WaitQueueTest, AnUnlockMessageWakesTheFirstWaiterOnly) {
    add("a"), add("b"), add("c");
    queue.on_message("0");
    EXPECT_EQ(log, Log{"a"});
}

TEST_F(WaitQueueTest, AWriteUnlockWakesEveryWaiterOnceInJoinOrder) {
    add("a"), add("b"), add("c");
    queue.on_message("1");
    EXPECT_EQ(log, (Log{"a", "b", "c"}));
}

TEST(WaitQueue, ASemaphoreMessageWakesAsManyWaitersAsPermits) {
    Log log;
    WaitQueue queue{semaphore_wakes};
    for (const char* name : {"a", "b", "c", "d"}) queue.join(std::make_shared<Recorder>(name, log), false);
    queue.on_message("2");
    EXPECT_EQ(log, (Log{"a", "b"}));
    log.clear();
    queue.on_message("0");
    EXPECT_TRUE(log.empty());
    queue.on_message("not a number");  // every waiter looks
    EXPECT_EQ(log, (Log{"a", "b", "c", "d"}));
}

TEST(WaitQueue, TheLatchWakesEveryWaiterWhateverTheMessage) {
    Log log;
    WaitQueue queue{[](std::string_view) { return wakes::all; }};
    queue.join(std::make_shared<Recorder>("a", log), false);
    queue.join(std::make_shared<Recorder>("b", log), false);
    queue.on_message("0");
    EXPECT_EQ(log, (Log{"a", "b"}));
}

TEST_F(WaitQueueTest, AWakeUpDeclinedGoesToTheNextWaiter) {
    auto a = add("a");
    auto b = add("b");
    add("c");
    a->decline = true;
    b->decline = true;
    queue.on_message("0");
    EXPECT_EQ(log, (Log{"a", "b", "c"}));
}

TEST_F(WaitQueueTest, AWakeUpPassedOnGoesToLaterWaitersOnly) {
    auto a = add("a");
    auto b = add("b");
    auto c = add("c");
    queue.on_message("0");
    ASSERT_EQ(log, Log{"a"});
    // a took it, then found it could not use it (a semaphore waiter for too
    // many permits); b and c cannot either: it runs off the end, not back to a.
    b->decline = true;
    c->decline = true;
    log.clear();
    queue.pass_on(1, a.get());
    EXPECT_EQ(log, (Log{"b", "c"}));
    log.clear();
    queue.pass_on(1, b.get());
    EXPECT_EQ(log, Log{"c"});
}

TEST_F(WaitQueueTest, AWakeUpPassedOnByOneWhoLeftGoesNowhere) {
    auto a = add("a");
    add("b");
    queue.leave(a.get());
    queue.pass_on(1, a.get());
    EXPECT_TRUE(log.empty());
    queue.hand_out(1);  // one handed on after leaving goes to those still there
    EXPECT_EQ(log, Log{"b"});
}

TEST_F(WaitQueueTest, AWaiterLeavingMidWayIsOfferedNothingMore) {
    auto a = add("a");
    auto b = add("b");
    add("c");
    a->then = [&] { queue.leave(b.get()); };
    queue.on_message("1");
    EXPECT_EQ(log, (Log{"a", "c"}));
    EXPECT_EQ(queue.size(), 2u);
}

TEST_F(WaitQueueTest, AWaiterLeavingWhileWokenPassesItsDeclinedWakeUpOn) {
    auto a = add("a");
    add("b");
    a->decline = true;
    a->then = [this, self = a.get()] { queue.leave(self); };
    a.reset();  // the queue held the last reference: kept alive while called
    queue.on_message("0");
    EXPECT_EQ(log, (Log{"a", "b"}));
    EXPECT_EQ(queue.size(), 1u);
}

TEST_F(WaitQueueTest, AWaiterJoiningDuringAnOfferIsNotOfferedIt) {
    auto a = add("a");
    a->then = [&] { add("late"); };
    queue.on_message("1");
    EXPECT_EQ(log, Log{"a"});
    EXPECT_EQ(queue.size(), 2u);
}

TEST_F(WaitQueueTest, AMessageWithNoWaiterIsLost) {
    queue.on_message("1");
    add("a");
    EXPECT_TRUE(log.empty());
    queue.on_message("0");
    EXPECT_EQ(log, Log{"a"});
}

TEST_F(WaitQueueTest, AWaiterJoiningAnActiveChannelIsToldAtOnce) {
    add("a");
    EXPECT_TRUE(log.empty());
    add("b", true);
    EXPECT_EQ(log, Log{"b subscribed"});
    log.clear();
    queue.on_subscribed();  // a reconnect: every waiter looks again
    EXPECT_EQ(log, (Log{"a subscribed", "b subscribed"}));
}

TEST_F(WaitQueueTest, ARefusedOrClosedChannelLetsEveryWaiterGo) {
    add("a"), add("b");
    queue.on_refused(detail::Failure::server("NOPERM", "NOPERM"));
    EXPECT_EQ(log, (Log{"a refused", "b refused"}));
    EXPECT_TRUE(queue.empty());

    add("c");
    log.clear();
    queue.on_closed();
    EXPECT_EQ(log, Log{"c closed"});
    EXPECT_TRUE(queue.empty());
}

}  // namespace
}  // namespace holdfast::detail
