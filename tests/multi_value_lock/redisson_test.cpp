// A Redisson getMultiLock(group, values) peer
// (tests/multi_value_lock/redisson_group_lock.lua, written from
// docs/redisson-layout.md) and holdfast share one group: each side waits
// while the other holds a value it wants, wakes on the other's unlock, and
// refuses what Redisson refuses.
#include <future>

#include "multi_value_lock/field.hpp"
#include "redis_fixture.hpp"
#include "redisson_peer.hpp"

namespace holdfast::testing {
namespace {

using GroupWithRedisson = RedisTest;

// A Java client with StringCodec: its fields are the hashes of the values' UTF-8 bytes.
RedissonGroupLockPeer java_seats(support::SyncRedis& raw, const std::vector<std::string>& values) {
    return RedissonGroupLockPeer(raw, "flight", detail::value_fields(values));
}

TEST_F(GroupWithRedisson, AJavaHolderKeepsHoldfastWaitingUntilItsUnlockWakesIt) {
    auto java = java_seats(*raw, {"12A", "12B"});
    ASSERT_EQ(java.lock()->type, REDIS_REPLY_NIL);
    Client client(config());
    MultiValueLock seats(client, "flight", {"12B", "12C"});
    EXPECT_FALSE(seats.try_lock());
    EXPECT_TRUE(seats.is_locked());
    EXPECT_THROW(seats.release(), NotOwnerError);  // Java's hold is not holdfast's to give back
    EXPECT_TRUE(java.is_held());
    auto waiter = take_and_give_back(seats);
    // Asleep on the channel: Java's lease is 30 s, so only its `0` wakes it in time.
    ASSERT_TRUE(eventually([&] { return subscribers(java.channel()) == 1; }));
    ASSERT_EQ(java.unlock()->integer, 1);
    ASSERT_EQ(waiter.wait_for(5s), std::future_status::ready);
    EXPECT_TRUE(waiter.get());
    EXPECT_EQ(raw->integer({"EXISTS", "flight"}), 0);  // both gone: only Java's unlock latch is left
}

TEST_F(GroupWithRedisson, AHoldfastHolderKeepsJavaOutAndItsUnlockLetsJavaIn) {
    Client client(config());
    MultiValueLock seats(client, "flight", {"12A", "12B"});
    seats.lock();
    auto java = java_seats(*raw, {"12B", "12C"});
    auto refused = java.lock();
    ASSERT_EQ(refused->type, REDIS_REPLY_INTEGER);  // ms until holdfast's expire time: what Java waits on
    EXPECT_GT(refused->integer, 25000);
    EXPECT_LE(refused->integer, 31000);
    EXPECT_EQ(java.try_lock()->integer, 0);
    EXPECT_TRUE(java.is_locked());  // Java reads holdfast's hold
    auto mine = RedissonGroupLockPeer(*raw, "flight", seats.fields());
    EXPECT_TRUE(mine.is_held(client.current_owner()));
    // Java cannot release or renew a hold that is not its own.
    EXPECT_EQ(RedissonGroupLockPeer(*raw, "flight", seats.fields()).unlock()->type, REDIS_REPLY_NIL);
    EXPECT_EQ(RedissonGroupLockPeer(*raw, "flight", seats.fields()).renew()->integer, 0);
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", java.channel()});
    seats.unlock();
    auto message = listener.read_reply();
    ASSERT_EQ(message->elements, 3u);
    EXPECT_EQ(std::string(message->element[2]->str), "1");  // Redisson's LockPubSub: every waiter tries
    EXPECT_EQ(java.lock()->type, REDIS_REPLY_NIL);
    EXPECT_TRUE(java.is_held());
    EXPECT_EQ(java.renew()->integer, 1);
    ASSERT_EQ(java.unlock()->integer, 1);
}

TEST_F(GroupWithRedisson, DisjointSetsOfBothSidesCoexist) {
    auto java = java_seats(*raw, {"12A"});
    ASSERT_EQ(java.lock()->type, REDIS_REPLY_NIL);
    Client client(config());
    MultiValueLock seats(client, "flight", {"12B", "12C"});
    ASSERT_TRUE(seats.try_lock());
    EXPECT_TRUE(java.is_held());
    seats.unlock();
    EXPECT_TRUE(java.is_held());
    ASSERT_EQ(java.unlock()->integer, 1);
}

// A Java hold whose lease ended (its client died) frees its values for
// holdfast, and its stale fields go; the dead Java client's unlock then fails.
TEST_F(GroupWithRedisson, AnEndedJavaHoldIsTakenOver) {
    auto java = java_seats(*raw, {"12A", "12B"});
    ASSERT_EQ(java.lock(java_owner, "200")->type, REDIS_REPLY_NIL);
    raw->command({"PERSIST", "flight"});  // the hash outlives the hold: only its expire times say it ended
    Client client(config());
    MultiValueLock seats(client, "flight", {"12A", "12B"});
    ASSERT_TRUE(seats.try_lock_for(10s));
    const auto left = raw->command({"HKEYS", "flight"});
    for (std::size_t i = 0; i < left->elements; ++i)
        EXPECT_EQ(std::string(left->element[i]->str).find(java_owner), std::string::npos) << left->element[i]->str;
    EXPECT_EQ(java.unlock()->type, REDIS_REPLY_NIL);
    EXPECT_GT(raw->integer({"PTTL", "flight"}), 25000);  // the hash got the lease again
    seats.unlock();
}

// Each side's nested holds: released one at a time, woken only by the last.
TEST_F(GroupWithRedisson, NestedJavaHoldsKeepHoldfastOutUntilTheLast) {
    auto java = java_seats(*raw, {"12A"});
    ASSERT_EQ(java.lock()->type, REDIS_REPLY_NIL);
    ASSERT_EQ(java.lock()->type, REDIS_REPLY_NIL);
    Client client(config());
    MultiValueLock seats(client, "flight", {"12A"});
    auto waiter = take_and_give_back(seats);
    ASSERT_TRUE(eventually([&] { return subscribers(java.channel()) == 1; }));
    ASSERT_EQ(java.unlock()->integer, 0);  // publishes all the same: the waiter tries, and is refused
    EXPECT_EQ(waiter.wait_for(300ms), std::future_status::timeout);
    ASSERT_EQ(java.unlock()->integer, 1);
    ASSERT_EQ(waiter.wait_for(5s), std::future_status::ready);
    EXPECT_TRUE(waiter.get());
}

}  // namespace
}  // namespace holdfast::testing
