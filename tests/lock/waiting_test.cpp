// Waiters sleep on the channel and wake on the unlock message, not by polling.
#include <future>

#include "core/client_core.hpp"
#include "door_keys.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using Waiting = RedisTest;

// The holder's lease is 30 s, so a waiter done within a few seconds was woken
// by the message, not by the TTL fallback.
TEST_F(Waiting, UnlockWakesAWaiterWithAtMostTwoAttempts) {
    Client holder_client(config()), waiter_client(config());
    Lock held(holder_client, "door"), wanted(waiter_client, "door");
    held.lock();
    raw->command({"CONFIG", "RESETSTAT"});
    auto waiter = std::async(std::launch::async, [&] {
        const bool got = wanted.try_lock_for(std::chrono::seconds(25));
        const auto at = std::chrono::steady_clock::now();
        if (got) wanted.unlock();
        return std::make_pair(got, at);
    });
    ASSERT_TRUE(eventually([&] { return subscribers(channel) == 1; }));
    // Subscribed: now it tries once more, then sleeps. Wait for that try.
    ASSERT_TRUE(eventually([&] { return script_calls() >= 2; }));
    raw->command({"CONFIG", "RESETSTAT"});
    const auto unlocked = std::chrono::steady_clock::now();
    held.unlock();
    ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    auto [got, at] = waiter.get();
    EXPECT_TRUE(got);
    EXPECT_LT(at - unlocked, std::chrono::seconds(3));
    // The holder's release, the waiter's attempts, the waiter's release.
    const long long attempts = script_calls() - 2;
    EXPECT_GE(attempts, 1);
    EXPECT_LE(attempts, 2);
}

TEST_F(Waiting, TryLockForTimesOutAndLeavesNothing) {
    Client holder_client(config()), waiter_client(config());
    Lock held(holder_client, "door"), wanted(waiter_client, "door");
    held.lock();
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(wanted.try_lock_for(std::chrono::milliseconds(300)));
    const auto waited = std::chrono::steady_clock::now() - start;
    EXPECT_GE(waited, std::chrono::milliseconds(300));
    EXPECT_LT(waited, std::chrono::seconds(5));
    EXPECT_TRUE(eventually([&] { return subscribers(channel) == 0; }));
    EXPECT_EQ(detail::core_of(waiter_client).watchdog.tracked(), 0u);
    EXPECT_FALSE(wanted.try_lock_until(std::chrono::system_clock::now() - std::chrono::seconds(1)));
    held.unlock();
    EXPECT_TRUE(wanted.try_lock_until(std::chrono::system_clock::now() + std::chrono::seconds(1)));
    wanted.unlock();
}

TEST_F(Waiting, WaitersShareOneSubscription) {
    Client holder_client(config()), waiter_client(config());
    Lock held(holder_client, "door"), wanted(waiter_client, "door");
    held.lock();
    raw->command({"CONFIG", "RESETSTAT"});
    constexpr int waiters = 6;
    std::vector<std::future<bool>> futures;
    for (int i = 0; i < waiters; ++i)
        futures.push_back(std::async(std::launch::async, [&] {
            if (!wanted.try_lock_for(std::chrono::seconds(30))) return false;
            wanted.unlock();
            return true;
        }));
    ASSERT_TRUE(eventually([&] { return script_calls() >= 2 * waiters; }));
    EXPECT_EQ(subscribers(channel), 1);
    EXPECT_EQ(calls("subscribe"), 1);
    held.unlock();
    // Each unlock wakes the next: all six get through long before the 30 s lease.
    for (auto& f : futures) {
        ASSERT_EQ(f.wait_for(std::chrono::seconds(20)), std::future_status::ready);
        EXPECT_TRUE(f.get());
    }
    EXPECT_TRUE(eventually([&] { return subscribers(channel) == 0; }));
    EXPECT_EQ(detail::core_of(waiter_client).transport.subscriber().channel_count(), 0u);
}

TEST_F(Waiting, ForceUnlockWakesWaiters) {
    Client holder_client(config()), waiter_client(config()), admin(config());
    Lock held(holder_client, "door"), wanted(waiter_client, "door");
    held.lock();
    auto waiter = std::async(std::launch::async, [&] { return wanted.try_lock_for(std::chrono::seconds(25)); });
    ASSERT_TRUE(eventually([&] { return subscribers(channel) == 1; }));
    EXPECT_TRUE(Lock(admin, "door").force_unlock());
    ASSERT_EQ(waiter.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    EXPECT_TRUE(waiter.get());
}

TEST_F(Waiting, ExpiredLeaseLetsTheWaiterInWithoutAMessage) {
    Client holder_client(config()), waiter_client(config());
    Lock held(holder_client, "door"), wanted(waiter_client, "door");
    held.lock(std::chrono::milliseconds(400));
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(wanted.try_lock_for(std::chrono::seconds(10)));
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    wanted.unlock();
}

TEST_F(Waiting, ClosingTheClientFailsItsWaiters) {
    Client holder_client(config());
    Lock held(holder_client, "door");
    held.lock();
    auto waiter_client = std::make_unique<Client>(config());
    Lock wanted(*waiter_client, "door");
    auto waiter = wait_until_closed([&] { wanted.try_lock_for(std::chrono::seconds(30)); });
    ASSERT_TRUE(eventually([&] { return subscribers(channel) == 1; }));
    waiter_client.reset();
    ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    // Sleeping or mid-attempt, the waiter learns why it stopped.
    const std::string why = waiter.get();
    EXPECT_NE(why.find("shutting down"), std::string::npos) << why;
    held.unlock();
}

}  // namespace
}  // namespace holdfast::testing
