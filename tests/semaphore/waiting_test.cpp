// Semaphore waiters sleep on redisson_sc:{name}: a release of n wakes n of
// them (not fewer, and not everyone), and nothing polls.
#include <future>
#include <thread>

#include "core/client_core.hpp"
#include "pool_keys.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

class SemaphoreWaiting : public RedisTest {
protected:
    void SetUp() override {
        RedisTest::SetUp();
        cache_scripts();  // script_calls() counts attempts
    }

    // `count` threads blocked in acquire(permits) on `client`, each tried
    // twice (before and after subscribing) and asleep.
    std::vector<std::future<void>> waiters(Client& client, int count, std::int64_t permits = 1) {
        const long long before = script_calls();
        std::vector<std::future<void>> futures;
        for (int i = 0; i < count; ++i)
            futures.push_back(std::async(std::launch::async, [&client, permits] {
                Semaphore(client, "pool").acquire(permits);
            }));
        EXPECT_TRUE(eventually([&] { return script_calls() >= before + 2 * count; }));
        return futures;
    }

    static int finished(std::vector<std::future<void>>& futures, std::chrono::milliseconds within) {
        const auto deadline = std::chrono::steady_clock::now() + within;
        int ready = 0;
        for (auto& f : futures)
            if (f.wait_until(deadline) == std::future_status::ready) ++ready;
        return ready;
    }
};

TEST_F(SemaphoreWaiting, AReleaseOfNWakesNWaitersAndLeavesTheRestAsleep) {
    Client waiting(config()), releasing(config());
    Semaphore(releasing, "pool").try_set_permits(0);
    auto futures = waiters(waiting, 5);
    EXPECT_EQ(subscribers(channel), 1);  // one subscription for all five

    auto ready = [&] {
        int n = 0;
        for (auto& f : futures)
            if (f.wait_for(std::chrono::milliseconds(0)) == std::future_status::ready) ++n;
        return n;
    };

    raw->command({"CONFIG", "RESETSTAT"});
    Semaphore(releasing, "pool").release(2);
    // The message carried the count, 2: two waiters woke and took the
    // permits; the other three sleep on (the release, then two attempts).
    ASSERT_TRUE(eventually([&] { return ready() == 2; }));
    EXPECT_EQ(script_calls(), 1 + 2);
    EXPECT_EQ(raw->string({"GET", "pool"}), "0");

    Semaphore(releasing, "pool").release(3);
    EXPECT_EQ(finished(futures, std::chrono::seconds(10)), 5);  // all of them: none was left asleep
    EXPECT_EQ(raw->string({"GET", "pool"}), "0");
    EXPECT_TRUE(eventually([&] { return subscribers(channel) == 0; }));
    EXPECT_EQ(detail::core_of(waiting).transport.subscriber().channel_count(), 0u);
}

TEST_F(SemaphoreWaiting, WaitersSleepUntilAMessage) {
    Client waiting(config()), releasing(config());
    Semaphore(releasing, "pool").try_set_permits(0);
    auto futures = waiters(waiting, 3);
    raw->command({"CONFIG", "RESETSTAT"});
    // Nothing to wait for but a message (no TTL): a polling waiter would call here.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_EQ(script_calls(), 0);
    Semaphore(releasing, "pool").release(3);
    EXPECT_EQ(finished(futures, std::chrono::seconds(10)), 3);
    EXPECT_LE(script_calls(), 1 + 2 * 3);
}

// A waiter for 3 permits is woken by a count of 1 it cannot use: it hands the
// wake-up on to the waiter for 1 behind it instead of swallowing it.
TEST_F(SemaphoreWaiting, AWaiterForMorePermitsPassesAWakeUpOn) {
    Client waiting(config()), releasing(config());
    Semaphore pool(releasing, "pool");
    pool.try_set_permits(0);
    auto big = waiters(waiting, 1, 3);
    auto small = waiters(waiting, 1, 1);
    pool.release(1);
    EXPECT_EQ(finished(small, std::chrono::seconds(10)), 1);
    EXPECT_EQ(big[0].wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
    pool.release(3);
    EXPECT_EQ(finished(big, std::chrono::seconds(10)), 1);
    EXPECT_EQ(raw->string({"GET", "pool"}), "0");
}

TEST_F(SemaphoreWaiting, TimedOutWaitersLeaveNothingBehind) {
    Client client(config());
    Semaphore pool(client, "pool");
    EXPECT_FALSE(pool.try_acquire_for(std::chrono::milliseconds(300)));
    EXPECT_TRUE(eventually([&] { return subscribers(channel) == 0; }));
    EXPECT_EQ(detail::core_of(client).transport.subscriber().channel_count(), 0u);
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(SemaphoreWaiting, WaitersInSeveralClientsAllProceed) {
    Client a(config()), b(config()), releasing(config());
    Semaphore(releasing, "pool").try_set_permits(0);
    auto in_a = waiters(a, 3);
    auto in_b = waiters(b, 3);
    EXPECT_EQ(subscribers(channel), 2);
    Semaphore(releasing, "pool").release(6);
    EXPECT_EQ(finished(in_a, std::chrono::seconds(10)), 3);
    EXPECT_EQ(finished(in_b, std::chrono::seconds(10)), 3);
    EXPECT_EQ(raw->string({"GET", "pool"}), "0");
}

}  // namespace
}  // namespace holdfast::testing
