// A wait stopped by its stop token leaves nothing behind: no hold, no
// renewal, no fair-queue entry, no subscription; a hold the attempt in
// flight took when the stop landed is given back.
#include <future>
#include <stop_token>

#include "core/client_core.hpp"
#include "stop_in_flight.hpp"

namespace holdfast::testing {
namespace {

const std::string fair_queue = "redisson_lock_queue:{line}";
const std::string fair_deadlines = "redisson_lock_timeout:{line}";

class Cancellation : public StopInFlightTest {
protected:
    void expect_nothing_left(Client& client, const std::string& channel) {
        auto& core = detail::core_of(client);
        EXPECT_TRUE(eventually([&] { return core.transport.subscriber().channel_count() == 0; }));
        EXPECT_TRUE(eventually([&] { return subscribers(channel) == 0; }));
        EXPECT_EQ(core.watchdog.tracked(), 0u) << "a renewal was left behind";
        EXPECT_EQ(core.holds.size(), 0u) << "a hold was recorded";
    }

    // A stopped fair waiter left the queue and its deadline.
    void expect_queue_empty() {
        EXPECT_EQ(raw->integer({"LLEN", fair_queue}), 0);
        EXPECT_EQ(raw->integer({"ZCARD", fair_deadlines}), 0);
    }
};


TEST_F(Cancellation, StoppedWhileWaitingLeavesTheChannel) {
    Client holder_client(config()), waiter_client(config());
    Lock held(holder_client, "job"), wanted(waiter_client, "job");
    held.lock();
    std::stop_source stop;
    auto waiter = wanted.async_try_lock(waiter_client.new_owner(), 30s, std::nullopt, stop.get_token());
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{job}") == 1; }));
    stop.request_stop();
    expect_stopped(waiter);
    expect_nothing_left(waiter_client, "redisson_lock__channel:{job}");
    EXPECT_EQ(raw->integer({"HLEN", "job"}), 1);  // the holder's alone
    held.unlock();
}

TEST_F(Cancellation, StoppedDuringAnAttemptThatTakesTheLockGivesItBack) {
    Client client(config());
    Lock lock(client, "job");
    pause_writes(1s);
    std::stop_source stop;
    auto waiter = lock.async_try_lock(client.new_owner(), 30s, std::nullopt, stop.get_token());
    stop.request_stop();
    expect_stopped(waiter);
    // Given back before the caller was told.
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);
    expect_nothing_left(client, "redisson_lock__channel:{job}");
}

TEST_F(Cancellation, StoppedDuringAReentrantAttemptGivesBackOnlyThatHold) {
    Client client(config());
    Lock lock(client, "job");
    const std::string owner = client.new_owner();
    ASSERT_TRUE(lock.async_try_lock(owner).get());
    pause_writes(1s);
    std::stop_source stop;
    auto again = lock.async_try_lock(owner, 30s, std::nullopt, stop.get_token());
    stop.request_stop();
    ASSERT_EQ(again.wait_for(10s), std::future_status::ready);
    EXPECT_FALSE(again.get());
    EXPECT_EQ(raw->string({"HGET", "job", owner}), "1");
    EXPECT_TRUE(detail::core_of(client).watchdog.renews("job", owner));  // the first hold still is
    lock.async_release(owner).get();
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);
    expect_nothing_left(client, "redisson_lock__channel:{job}");
}

TEST_F(Cancellation, StoppedAfterTheAcquireChangesNothing) {
    Client client(config());
    Lock lock(client, "job");
    const std::string owner = client.new_owner();
    std::stop_source stop;
    ASSERT_TRUE(lock.async_try_lock(owner, 30s, std::nullopt, stop.get_token()).get());
    stop.request_stop();
    EXPECT_TRUE(detail::core_of(client).watchdog.renews("job", owner));
    EXPECT_EQ(raw->string({"HGET", "job", owner}), "1");
    lock.async_release(owner).get();
}

TEST_F(Cancellation, FairWaiterStoppedBeforeItsFirstReplyLeavesTheQueue) {
    Client holder_client(config()), waiter_client(config());
    FairLock held(holder_client, "line"), wanted(waiter_client, "line");
    held.lock();
    const std::string owner = waiter_client.new_owner();
    pause_writes(500ms);
    std::stop_source stop;
    auto waiter = wanted.async_try_lock(owner, 30s, std::nullopt, stop.get_token());
    stop.request_stop();
    expect_stopped(waiter);
    expect_queue_empty();
    expect_nothing_left(waiter_client, "redisson_lock__channel:{line}:" + owner);
    held.unlock();
}

TEST_F(Cancellation, FairWaiterStoppedWhileQueuedLeavesTheQueue) {
    Client holder_client(config()), waiter_client(config());
    FairLock held(holder_client, "line"), wanted(waiter_client, "line");
    held.lock();
    const std::string owner = waiter_client.new_owner();
    std::stop_source stop;
    auto waiter = wanted.async_try_lock(owner, 30s, std::nullopt, stop.get_token());
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{line}:" + owner) == 1; }));
    ASSERT_EQ(raw->integer({"LLEN", fair_queue}), 1);
    stop.request_stop();
    expect_stopped(waiter);
    expect_queue_empty();
    expect_nothing_left(waiter_client, "redisson_lock__channel:{line}:" + owner);
    held.unlock();
}

TEST_F(Cancellation, FairLockStoppedDuringTheAttemptThatTakesItGivesItBack) {
    Client client(config());
    FairLock lock(client, "line");
    const std::string owner = client.new_owner();
    pause_writes(1s);
    std::stop_source stop;
    auto waiter = lock.async_try_lock(owner, 30s, std::nullopt, stop.get_token());
    stop.request_stop();
    expect_stopped(waiter);
    EXPECT_EQ(raw->integer({"EXISTS", "line"}), 0);
    EXPECT_EQ(raw->integer({"LLEN", fair_queue}), 0);
    expect_nothing_left(client, "redisson_lock__channel:{line}:" + owner);
}

}  // namespace
}  // namespace holdfast::testing
