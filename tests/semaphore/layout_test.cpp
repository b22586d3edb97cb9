// The semaphore's key, values, channel and messages are Redisson's: a Java
// peer's raw INCRBY + PUBLISH wakes holdfast waiters, and holdfast's messages
// carry what a Redisson waiter expects.
#include <future>

#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

class SemaphoreLayout : public RedisTest {
protected:
    void SetUp() override {
        RedisTest::SetUp();
        cache_scripts();  // script_calls() counts attempts
    }
};

TEST_F(SemaphoreLayout, AStringOfFreePermitsAndTheCountOnTheChannel) {
    Client client(config());
    Semaphore pool(client, "pool");
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_sc:{pool}"});

    auto next_message = [&] {
        auto message = listener.read_reply();
        EXPECT_EQ(message->elements, 3u);
        EXPECT_EQ(std::string(message->element[0]->str), "message");
        EXPECT_EQ(std::string(message->element[1]->str), "redisson_sc:{pool}");
        return std::string(message->element[2]->str);
    };

    ASSERT_TRUE(pool.try_set_permits(4));
    EXPECT_EQ(next_message(), "4");  // the permits set
    EXPECT_EQ(raw->string({"TYPE", "pool"}), "string");
    EXPECT_EQ(raw->string({"GET", "pool"}), "4");
    EXPECT_EQ(raw->integer({"PTTL", "pool"}), -1);

    ASSERT_TRUE(pool.try_acquire(3));
    EXPECT_EQ(raw->string({"GET", "pool"}), "1");
    pool.release(2);
    EXPECT_EQ(next_message(), "3");  // the new count, not the number released
    pool.add_permits(1);
    EXPECT_EQ(next_message(), "4");
    EXPECT_EQ(raw->integer({"DBSIZE"}), 1);  // nothing but the count
}

TEST_F(SemaphoreLayout, BracedNamesKeepTheirOwnTag) {
    Client client(config());
    Semaphore pool(client, "{user:7}:pool");
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_sc:{user:7}:pool"});
    pool.release();
    auto message = listener.read_reply();
    EXPECT_EQ(std::string(message->element[1]->str), "redisson_sc:{user:7}:pool");
    EXPECT_EQ(std::string(message->element[2]->str), "1");
    EXPECT_EQ(raw->string({"GET", "{user:7}:pool"}), "1");
}

TEST_F(SemaphoreLayout, AJavaPeersReleaseWakesHoldfastWaiters) {
    Client client(config());
    Semaphore pool(client, "shared");
    pool.try_set_permits(0);
    std::vector<std::future<bool>> waiters;
    for (int i = 0; i < 2; ++i)
        waiters.push_back(
            std::async(std::launch::async, [&] { return pool.try_acquire_for(std::chrono::seconds(30)); }));
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_sc:{shared}") == 1 && script_calls() >= 4; }));
    // What RSemaphore.release(2) does: INCRBY, then publish the new count.
    const long long count = raw->integer({"INCRBY", "shared", "2"});
    raw->command({"PUBLISH", "redisson_sc:{shared}", std::to_string(count)});
    for (auto& w : waiters) {
        ASSERT_EQ(w.wait_for(std::chrono::seconds(10)), std::future_status::ready);
        EXPECT_TRUE(w.get());
    }
    EXPECT_EQ(raw->string({"GET", "shared"}), "0");
}

TEST_F(SemaphoreLayout, AJavaPeerSettingThePermitsWakesHoldfastWaiters) {
    Client client(config());
    Semaphore pool(client, "fresh");
    auto waiter = std::async(std::launch::async, [&] { return pool.try_acquire_for(std::chrono::seconds(30)); });
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_sc:{fresh}") == 1 && script_calls() >= 2; }));
    // RSemaphore.trySetPermits(1): SET if absent, publish the permits.
    raw->command({"SET", "fresh", "1", "NX"});
    raw->command({"PUBLISH", "redisson_sc:{fresh}", "1"});
    ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(waiter.get());
}

}  // namespace
}  // namespace holdfast::testing
