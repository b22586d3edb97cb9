// Fair queues shared with Redisson's RFairLock waiters (emulated by
// redisson_fair_lock.lua): arrival order and wake-ups by message survive
// Redisson's deadline arithmetic, and a dead holdfast waiter is still passed
// over within seconds.
#include <csignal>
#include <future>
#include <spawn.h>
#include <sys/wait.h>

#include "line_keys.hpp"
#include "redis_fixture.hpp"
#include "redisson_fair_lock.hpp"

extern char** environ;

namespace holdfast::testing {
namespace {

using MixedQueue = RedisTest;

std::vector<std::string> queue_of(support::SyncRedis& raw) {
    std::vector<std::string> owners;
    auto reply = raw.command({"LRANGE", "redisson_lock_queue:{line}", "0", "-1"});
    for (std::size_t i = 0; i < reply->elements; ++i) owners.emplace_back(reply->element[i]->str);
    return owners;
}

void subscribe(support::SyncRedis& listener, const std::string& channel) {
    listener.command({"SUBSCRIBE", channel});  // the reply is the confirmation
}

std::string message_on(support::SyncRedis& listener, const std::string& channel) {
    auto message = listener.read_reply();
    EXPECT_EQ(message->elements, 3u);
    if (message->elements != 3u) return "";
    EXPECT_EQ(std::string(message->element[1]->str), channel);
    return message->element[2]->str;
}

// A Redisson client's acquisition lowers every remaining deadline by its 300 s
// budget; a holdfast waiter behind it must neither be dropped nor overtaken,
// and is woken by the message the next release sends it.
TEST_F(MixedQueue, AHoldfastWaiterBehindARedissonWaiterKeepsItsTurnAndIsWokenByItsMessage) {
    RedissonFairLock java(*raw, "line");
    ASSERT_TRUE(java.try_acquire(java_holder));
    ASSERT_FALSE(java.try_acquire(first_java));
    Client client(config());
    // Retries every 30 s (a quarter of 2 minutes; the lease is 2 minutes too):
    // being served within the 10 s below can only come from its message.
    FairLock fair(client, "line", std::chrono::minutes(2));
    const std::string mine = client.new_owner();
    auto waiting = fair.async_try_lock(mine, std::chrono::seconds(60));
    ASSERT_TRUE(eventually([&] { return queue_of(*raw).size() == 2; }));
    ASSERT_FALSE(java.try_acquire(last_java));
    EXPECT_EQ(queue_of(*raw), (std::vector<std::string>{first_java, mine, last_java}));

    EXPECT_EQ(java.release(java_holder), 1);
    ASSERT_TRUE(java.try_acquire(first_java));  // lowers every deadline by 300 s
    EXPECT_EQ(queue_of(*raw), (std::vector<std::string>{mine, last_java}));
    EXPECT_EQ(java.release(first_java), 1);
    ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready)
        << "the holdfast waiter was not woken by the release (queue now: " << ::testing::PrintToString(queue_of(*raw))
        << ")";
    EXPECT_TRUE(waiting.get());
    EXPECT_EQ(queue_of(*raw), (std::vector<std::string>{last_java}));

    support::SyncRedis listener(server->port());
    subscribe(listener, java.channel(last_java));
    fair.async_release(mine).get();
    EXPECT_EQ(message_on(listener, java.channel(last_java)), "0");
    EXPECT_TRUE(java.try_acquire(last_java));
    EXPECT_EQ(java.release(last_java), 1);
    EXPECT_EQ(raw->integer({"EXISTS", "redisson_lock_queue:{line}", "redisson_lock_timeout:{line}",
                            "holdfast_fair_alive:{line}"}),
              0);
}

// A holdfast waiter killed in the queue, a Redisson waiter behind it: a live
// holdfast waiter's retries pass over the dead one within seconds (Redisson's
// own scripts would wait for its 5-minute deadline) and wake the Java waiter.
TEST_F(MixedQueue, ADeadHoldfastWaiterIsPassedOverWithinSeconds) {
    RedissonFairLock java(*raw, "line");
    ASSERT_TRUE(java.try_acquire(java_holder));
    const std::string url = "redis://127.0.0.1:" + std::to_string(server->port());
    const char* argv[] = {HOLDFAST_CLI, "run", "--fair", "--url", url.c_str(), "--wait", "60s", "line", "--", "true",
                          nullptr};
    pid_t doomed = 0;
    ASSERT_EQ(posix_spawn(&doomed, HOLDFAST_CLI, nullptr, nullptr, const_cast<char**>(argv), environ), 0);
    ASSERT_TRUE(eventually([&] { return queue_of(*raw).size() == 1; }));
    kill(doomed, SIGKILL);
    waitpid(doomed, nullptr, 0);
    ASSERT_FALSE(java.try_acquire(first_java));

    Client client(config());
    FairLock fair(client, "line");  // the default: passed over 5 s after it stops retrying
    const std::string mine = client.new_owner();
    auto waiting = fair.async_try_lock(mine, std::chrono::seconds(60));
    ASSERT_TRUE(eventually([&] { return queue_of(*raw).size() == 3; }));
    support::SyncRedis listener(server->port());
    subscribe(listener, java.channel(first_java));

    EXPECT_EQ(java.release(java_holder), 1);  // wakes the dead head: nobody moves
    ASSERT_TRUE(eventually([&] { const auto line = queue_of(*raw);
        return !line.empty() && line.front() == first_java;
    }, std::chrono::seconds(20)));
    EXPECT_EQ(message_on(listener, java.channel(first_java)), "0");
    EXPECT_EQ(queue_of(*raw), (std::vector<std::string>{first_java, mine}));
    ASSERT_TRUE(java.try_acquire(first_java));
    EXPECT_EQ(java.release(first_java), 1);
    ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(waiting.get());
    fair.async_release(mine).get();
    EXPECT_EQ(raw->integer({"EXISTS", "line", "redisson_lock_queue:{line}"}), 0);
}

}  // namespace
}  // namespace holdfast::testing
