// holdfast and a Redisson peer (redisson_semaphore.lua, written from
// docs/redisson-layout.md) on one semaphore: each sees what the other's
// trySetPermits(n, ttl), releaseIfExists, multi-permit acquire, list release,
// lease time, counts and setPermits did.
#include <future>

#include "redis_fixture.hpp"
#include "redisson_semaphore.hpp"

namespace holdfast::testing {
namespace {

using RedissonInterop = RedisTest;

TEST_F(RedissonInterop, ACountSetWithATimeToLiveExpiresForBoth) {
    Client client(config());
    Semaphore pool(client, "pool");
    RedissonSemaphore java(*raw, "pool");

    ASSERT_TRUE(java.try_set_permits(3, 60000));
    EXPECT_FALSE(pool.try_set_permits(5, 60s));  // a count exists
    EXPECT_EQ(pool.available_permits(), 3);
    EXPECT_GT(raw->integer({"PTTL", "pool"}), 50000);

    Semaphore brief(client, "brief");
    RedissonSemaphore java_brief(*raw, "brief");
    ASSERT_TRUE(brief.try_set_permits(2, 300ms));
    EXPECT_FALSE(java_brief.try_set_permits(9));
    const long long pttl = raw->integer({"PTTL", "brief"});
    EXPECT_GT(pttl, 0);
    EXPECT_LE(pttl, 300);
    ASSERT_TRUE(eventually([&] { return raw->integer({"EXISTS", "brief"}) == 0; }));
    EXPECT_EQ(brief.available_permits(), 0);
    EXPECT_TRUE(java_brief.try_set_permits(1));  // gone with its ttl: the next set wins
}

TEST_F(RedissonInterop, ReleaseIfExistsAddsOnlyToACountThatExistsOnEitherSide) {
    Client client(config());
    Semaphore pool(client, "pool");
    RedissonSemaphore java(*raw, "pool");

    EXPECT_FALSE(pool.release_if_exists(2));
    EXPECT_FALSE(java.release_if_exists(2));
    EXPECT_EQ(raw->integer({"EXISTS", "pool"}), 0) << "neither made a count";

    ASSERT_TRUE(pool.try_set_permits(0));
    // A holdfast waiter for two permits wakes on the Java release.
    auto waiter = std::async(std::launch::async, [&] { return pool.try_acquire_for(2, 30s); });
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_sc:{pool}") == 1; }));
    EXPECT_TRUE(java.release_if_exists(2));
    ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(waiter.get());
    EXPECT_TRUE(pool.release_if_exists(1));
    EXPECT_EQ(java.available_permits(), 1);
}

TEST_F(RedissonInterop, PermitsTakenInABatchByOneAreCountedAndReleasedByTheOther) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    RedissonSemaphore java(*raw, "pool");
    ASSERT_TRUE(pool.try_set_permits(6));

    // holdfast takes three with a lease; Java sees them taken, with that lease.
    const std::vector<std::string> ours = pool.try_acquire(3, 60s);
    ASSERT_EQ(ours.size(), 3u);
    EXPECT_EQ(java.acquired_permits(), 3);
    EXPECT_EQ(java.available_permits(), 3);
    EXPECT_EQ(java.permits(), 6);
    for (const auto& id : ours) {
        const auto left = java.lease_time(id);
        ASSERT_TRUE(left) << id;
        EXPECT_GT(*left, 50000);
        EXPECT_LE(*left, 60000);
    }

    // Java takes two that never expire; holdfast sees them, and their lease.
    const std::vector<std::string> theirs = java.try_acquire(2);
    ASSERT_EQ(theirs.size(), 2u);
    EXPECT_EQ(pool.acquired_permits(), 5);
    EXPECT_EQ(pool.available_permits(), 1);
    EXPECT_EQ(pool.permits(), 6);
    EXPECT_EQ(pool.remaining_ttl(theirs[0]), PermitExpirableSemaphore::Duration::max());
    EXPECT_TRUE(java.try_acquire(2).empty()) << "one is free, two are asked: none taken";
    EXPECT_TRUE(pool.try_acquire(2).empty());

    // Each releases the other's batch.
    EXPECT_EQ(java.try_release(ours), 3);
    EXPECT_FALSE(pool.remaining_ttl(ours[1]));
    pool.release(theirs);
    EXPECT_FALSE(java.lease_time(theirs[0]));
    EXPECT_EQ(java.available_permits(), 6);
    EXPECT_EQ(pool.acquired_permits(), 0);
}

TEST_F(RedissonInterop, AListWithOneIdNotHeldReleasesNothingOnEitherSide) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    RedissonSemaphore java(*raw, "pool");
    ASSERT_TRUE(pool.try_set_permits(4));
    const std::vector<std::string> ours = pool.try_acquire(2);
    const std::vector<std::string> theirs = java.try_acquire(1);
    ASSERT_EQ(ours.size(), 2u);
    ASSERT_EQ(theirs.size(), 1u);
    ASSERT_TRUE(java.try_release(theirs[0]));

    EXPECT_EQ(java.try_release({ours[0], theirs[0]}), 0);
    EXPECT_FALSE(pool.try_release({ours[1], theirs[0]}));
    EXPECT_THROW(pool.release({ours[1], theirs[0]}), NotOwnerError);
    EXPECT_EQ(java.acquired_permits(), 2) << "both of ours still taken";
    EXPECT_EQ(pool.available_permits(), 2);
}

TEST_F(RedissonInterop, SetPermitsMakesTheSameTotalForBoth) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    RedissonSemaphore java(*raw, "pool");
    ASSERT_TRUE(pool.try_set_permits(4));
    ASSERT_EQ(pool.try_acquire(2).size(), 2u);

    java.set_permits(5);  // two taken: three free
    EXPECT_EQ(pool.permits(), 5);
    EXPECT_EQ(pool.available_permits(), 3);

    pool.set_permits(1);  // two taken, the total one: -1 free
    EXPECT_EQ(java.permits(), 1);
    EXPECT_EQ(java.available_permits(), -1);
    EXPECT_TRUE(java.try_acquire(1).empty());

    pool.set_permits(1);  // the same total: nothing moves
    EXPECT_EQ(raw->string({"GET", "pool"}), "-1");
}

// A holdfast waiter for several permits sleeps until a Java list release
// frees enough, and takes them all at once.
TEST_F(RedissonInterop, AWaiterForABatchWakesOnAJavaListRelease) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    RedissonSemaphore java(*raw, "pool");
    ASSERT_TRUE(pool.try_set_permits(3));
    const std::vector<std::string> theirs = java.try_acquire(3, 60000);
    ASSERT_EQ(theirs.size(), 3u);
    auto waiter = std::async(std::launch::async, [&] { return pool.try_acquire_for(2, 30s, 10s); });
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_sc:{pool}") == 1; }));
    ASSERT_EQ(java.try_release({theirs[0], theirs[1]}), 2);
    ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
    const std::vector<std::string> ours = waiter.get();
    ASSERT_EQ(ours.size(), 2u);
    const auto left = java.lease_time(ours[0]);
    ASSERT_TRUE(left);
    EXPECT_GT(*left, 0);
    EXPECT_LE(*left, 10000);
    EXPECT_EQ(java.acquired_permits(), 3);
}

}  // namespace
}  // namespace holdfast::testing
