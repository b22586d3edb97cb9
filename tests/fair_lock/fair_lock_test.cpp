// The fair lock: first come, first served; only the first waiter is woken; a
// waiter that leaves or dies does not hold up the others for long.
#include <csignal>
#include <future>
#include <mutex>
#include <spawn.h>
#include <sys/wait.h>

#include "core/client_core.hpp"
#include "line_keys.hpp"
#include "redis_fixture.hpp"

extern char** environ;

namespace holdfast::testing {
namespace {

using Fairness = RedisTest;

long long queue_length(support::SyncRedis& raw) { return raw.integer({"LLEN", queue}); }

TEST_F(Fairness, AWaiterQueuesWithADeadlineAndTheUnlockWakesItsOwnChannel) {
    Client holder_client(config()), waiter_client(config());
    FairLock held(holder_client, "line"), wanted(waiter_client, "line");
    held.lock();
    const std::string owner = waiter_client.new_owner();
    auto waiter = wanted.async_try_lock(owner, std::chrono::seconds(30));
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{line}:" + owner) == 1; }));
    EXPECT_EQ(raw->string({"LINDEX", queue, "0"}), owner);
    const long long now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch()).count();
    // Chained as RFairLock chains it: the lock's TTL (30 s) plus the 5-minute queue budget.
    const long long deadline = std::stoll(raw->string({"ZSCORE", deadlines, owner}));
    EXPECT_GT(deadline, now_ms + 300000);
    EXPECT_LE(deadline, now_ms + 330000 + 1000);
    // And its sign of life: alive until 5 s (the default dead-waiter timeout) after its last call.
    const long long alive = std::stoll(raw->string({"HGET", "holdfast_fair_alive:{line}", owner}));
    EXPECT_GT(alive, now_ms);
    EXPECT_LE(alive, now_ms + 5000 + 1000);

    support::SyncRedis listener(server->port());
    listener.command({"PSUBSCRIBE", "redisson_lock__channel:{line}*"});
    held.unlock();
    ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(waiter.get());
    auto message = listener.read_reply();
    ASSERT_EQ(message->elements, 4u);
    EXPECT_EQ(std::string(message->element[2]->str), "redisson_lock__channel:{line}:" + owner);
    EXPECT_EQ(std::string(message->element[3]->str), "0");
    EXPECT_EQ(queue_length(*raw), 0);
    EXPECT_EQ(raw->integer({"ZCARD", deadlines}), 0);
    wanted.async_release(owner).get();
}

// Waiters that keep waiting get the lock in the order they asked for it.
TEST_F(Fairness, WaitersAreServedInArrivalOrder) {
    Client holder_client(config()), waiter_client(config());
    FairLock held(holder_client, "line"), wanted(waiter_client, "line");
    held.lock();
    std::mutex mutex;
    std::vector<int> served;
    std::vector<std::future<void>> waiters;
    constexpr int count = 5;
    for (int i = 0; i < count; ++i) {
        waiters.push_back(std::async(std::launch::async, [&, i] {
            wanted.lock();
            {
                std::lock_guard guard(mutex);
                served.push_back(i);
            }
            wanted.unlock();
        }));
        ASSERT_TRUE(eventually([&] { return queue_length(*raw) == i + 1; }));
    }
    held.unlock();
    for (auto& w : waiters) ASSERT_EQ(w.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    EXPECT_EQ(served, (std::vector<int>{0, 1, 2, 3, 4}));
    EXPECT_EQ(queue_length(*raw), 0);
    EXPECT_EQ(raw->integer({"EXISTS", "line"}), 0);
}

TEST_F(Fairness, TryLockNeverJoinsTheQueue) {
    Client a(config()), b(config());
    FairLock held(a, "line"), wanted(b, "line");
    held.lock();
    EXPECT_FALSE(wanted.try_lock());
    EXPECT_EQ(queue_length(*raw), 0);
    EXPECT_EQ(raw->integer({"EXISTS", deadlines}), 0);
    held.unlock();
}

// A waiter that gives up leaves the queue; the one behind it (a Java waiter,
// written as RFairLock writes it) moves up, and its deadline drops by the
// quitter's queue budget.
TEST_F(Fairness, AWaiterThatGivesUpLeavesAndTheOthersMoveUp) {
    Client holder_client(config()), waiter_client(config());
    FairLock held(holder_client, "line"), wanted(waiter_client, "line");
    held.lock();
    const std::string quitter = waiter_client.new_owner();
    auto quits = wanted.async_try_lock(quitter, std::chrono::milliseconds(500));
    ASSERT_TRUE(eventually([&] { return queue_length(*raw) == 1; }));
    const std::string java = "5f1c6a4e-0000-4000-8000-00000000beef:1";
    const long long java_deadline = 4102444800000;  // far ahead: 2100-01-01
    raw->command({"RPUSH", queue, java});
    raw->command({"ZADD", deadlines, std::to_string(java_deadline), java});
    ASSERT_EQ(quits.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_FALSE(quits.get());
    EXPECT_EQ(queue_length(*raw), 1);
    EXPECT_EQ(raw->string({"LINDEX", queue, "0"}), java);
    EXPECT_EQ(raw->string({"ZSCORE", deadlines, quitter}), "");
    EXPECT_EQ(raw->integer({"EXISTS", "holdfast_fair_alive:{line}"}), 0);
    EXPECT_EQ(std::stoll(raw->string({"ZSCORE", deadlines, java})), java_deadline - 300000);  // Config::fair_lock_wait_timeout's default
    EXPECT_TRUE(eventually([&] { return detail::core_of(waiter_client).transport.subscriber().channel_count() == 0; }));
    held.unlock();
}

// A holdfast waiter behind one that gives up still gets the lock, in order.
TEST_F(Fairness, WaitersBehindAQuitterKeepTheirTurn) {
    Client holder_client(config()), waiter_client(config());
    FairLock held(holder_client, "line"), wanted(waiter_client, "line");
    held.lock();
    const std::string quitter = waiter_client.new_owner(), stayer = waiter_client.new_owner();
    auto quits = wanted.async_try_lock(quitter, std::chrono::milliseconds(300));
    ASSERT_TRUE(eventually([&] { return queue_length(*raw) == 1; }));
    auto stays = wanted.async_try_lock(stayer, std::chrono::seconds(60));
    ASSERT_TRUE(eventually([&] { return queue_length(*raw) == 2; }));
    ASSERT_EQ(quits.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_FALSE(quits.get());
    EXPECT_EQ(raw->string({"LINDEX", queue, "0"}), stayer);
    held.unlock();
    ASSERT_EQ(stays.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(stays.get());
    wanted.async_release(stayer).get();
}

// A waiter process killed in the queue: the next waiter gets the lock once the
// dead one's sign of life (5 s after its last retry) has run out, not after its
// deadline's five minutes.
TEST_F(Fairness, AKilledWaiterStallsTheQueueForAtMostItsBudget) {
    Client holder_client(config()), waiter_client(config());
    FairLock held(holder_client, "line"), wanted(waiter_client, "line");
    held.lock();
    const std::string url = "redis://127.0.0.1:" + std::to_string(server->port());
    const char* argv[] = {HOLDFAST_CLI, "run", "--fair", "--url", url.c_str(), "--wait", "60s", "line", "--", "true",
                          nullptr};
    pid_t doomed = 0;
    ASSERT_EQ(posix_spawn(&doomed, HOLDFAST_CLI, nullptr, nullptr, const_cast<char**>(argv), environ), 0);
    ASSERT_TRUE(eventually([&] { return queue_length(*raw) == 1; }));
    kill(doomed, SIGKILL);
    int status = 0;
    waitpid(doomed, &status, 0);
    auto next = std::async(std::launch::async, [&] {
        const bool got = wanted.try_lock_for(std::chrono::seconds(5 + 5));
        if (got) wanted.unlock();
        return got;
    });
    ASSERT_TRUE(eventually([&] { return queue_length(*raw) == 2; }));
    held.unlock();
    ASSERT_EQ(next.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    EXPECT_TRUE(next.get());
    EXPECT_EQ(queue_length(*raw), 0);
}

TEST_F(Fairness, ADeadWaiterTimeoutOfZeroIsRefused) {
    Client client(config());
    EXPECT_THROW(FairLock(client, "line", std::chrono::milliseconds(0)), std::invalid_argument);
}

}  // namespace
}  // namespace holdfast::testing
