// Config::fair_lock_wait_timeout (Redisson's fairLockWaitTimeout): the budget
// a holdfast client chains fair-lock deadlines with, set here from the URL to
// 20 s and matched by Redisson clients (emulated by redisson_fair_lock.lua)
// configured alike. Joining, granting and giving up each move deadlines by
// exactly that budget, so a mixed queue keeps its order.
#include <future>

#include "line_keys.hpp"
#include "redis_fixture.hpp"
#include "redisson_fair_lock.hpp"

namespace holdfast::testing {
namespace {

using FairWaitTimeout = RedisTest;

constexpr long long budget_ms = 20000;

long long deadline_of(support::SyncRedis& raw, const std::string& owner) {
    return std::stoll(raw.string({"ZSCORE", deadlines, owner}));
}

TEST_F(FairWaitTimeout, JoiningAndGrantingMoveDeadlinesByTheConfiguredBudget) {
    RedissonFairLock java(*raw, "line", budget_ms);
    ASSERT_TRUE(java.try_acquire(java_holder));
    ASSERT_FALSE(java.try_acquire(first_java));
    const long long first_deadline = deadline_of(*raw, first_java);

    Client client("redis://127.0.0.1:" + std::to_string(server->port()) + "?fair_lock_wait_timeout=20000");
    ASSERT_EQ(client.config().fair_lock_wait_timeout, std::chrono::milliseconds(budget_ms));
    FairLock fair(client, "line", std::chrono::minutes(2));  // retries every 30 s: served only by its message
    const std::string mine = client.new_owner();
    auto waiting = fair.async_try_lock(mine, std::chrono::seconds(60));
    ASSERT_TRUE(eventually([&] { return raw->integer({"LLEN", queue}) == 2; }));
    // Chained behind the Java waiter with the client's budget, not a fixed 5 minutes.
    EXPECT_EQ(deadline_of(*raw, mine), first_deadline + budget_ms);

    EXPECT_EQ(java.release(java_holder), 1);
    ASSERT_TRUE(java.try_acquire(first_java));  // a Java grant lowers the others by its 20 s
    EXPECT_EQ(deadline_of(*raw, mine), first_deadline);
    ASSERT_FALSE(java.try_acquire(last_java));
    const long long last_deadline = deadline_of(*raw, last_java);
    EXPECT_EQ(last_deadline, first_deadline + budget_ms);

    EXPECT_EQ(java.release(first_java), 1);
    ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(waiting.get());
    // holdfast's grant lowers the Java waiter behind it by the same 20 s.
    EXPECT_EQ(deadline_of(*raw, last_java), last_deadline - budget_ms);
    fair.async_release(mine).get();
    EXPECT_TRUE(java.try_acquire(last_java));
    EXPECT_EQ(java.release(last_java), 1);
}

// A holdfast waiter that gives up lowers the deadlines behind it by its budget.
TEST_F(FairWaitTimeout, GivingUpLowersTheWaitersBehindByTheConfiguredBudget) {
    Config c = config();
    c.fair_lock_wait_timeout = std::chrono::milliseconds(budget_ms);
    Client holder_client(config()), waiter_client(c);
    FairLock held(holder_client, "line"), wanted(waiter_client, "line");
    held.lock();
    const std::string quitter = waiter_client.new_owner();
    auto quits = wanted.async_try_lock(quitter, std::chrono::milliseconds(500));
    ASSERT_TRUE(eventually([&] { return raw->integer({"LLEN", queue}) == 1; }));
    const long long java_deadline = 4102444800000;  // far ahead: 2100-01-01
    raw->command({"RPUSH", queue, last_java});
    raw->command({"ZADD", deadlines, std::to_string(java_deadline), last_java});
    ASSERT_EQ(quits.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_FALSE(quits.get());
    EXPECT_EQ(deadline_of(*raw, last_java), java_deadline - budget_ms);
    held.unlock();
}

}  // namespace
}  // namespace holdfast::testing
