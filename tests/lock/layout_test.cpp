// The raw keys, fields, TTLs and channel are Redisson's, and a Redisson peer
// (tests/lock/redisson_lock.lua, written from docs/redisson-layout.md) shares the lock.
#include <future>

#include "redis_fixture.hpp"
#include "redisson_peer.hpp"

namespace holdfast::testing {
namespace {

class Layout : public RedisTest {
protected:
    support::ReplyPtr java_lock(const std::string& name) { return RedissonLockPeer(*raw, name).lock(); }
    support::ReplyPtr java_unlock(const std::string& name) { return RedissonLockPeer(*raw, name).unlock(); }
};

TEST_F(Layout, HashFieldTtlAndChannelAreRedissons) {
    Client client(config());
    Lock lock(client, "inventory");
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_lock__channel:{inventory}"});

    lock.lock();
    EXPECT_EQ(raw->string({"TYPE", "inventory"}), "hash");
    auto fields = raw->command({"HGETALL", "inventory"});
    ASSERT_EQ(fields->elements, 2u);
    EXPECT_EQ(std::string(fields->element[0]->str), client.current_owner());
    EXPECT_EQ(std::string(fields->element[1]->str), "1");
    const long long pttl = raw->integer({"PTTL", "inventory"});
    EXPECT_GT(pttl, 25000);  // the 30 s watchdog lease
    EXPECT_LE(pttl, 30000);
    EXPECT_EQ(raw->integer({"DBSIZE"}), 1);  // nothing else written
    lock.unlock();

    auto message = listener.read_reply();
    ASSERT_EQ(message->elements, 3u);
    EXPECT_EQ(std::string(message->element[0]->str), "message");
    EXPECT_EQ(std::string(message->element[1]->str), "redisson_lock__channel:{inventory}");
    EXPECT_EQ(std::string(message->element[2]->str), "0");
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(Layout, ExplicitLeaseIsTheTtl) {
    Client client(config());
    Lock lock(client, "leased");
    lock.lock(std::chrono::milliseconds(7000));
    const long long pttl = raw->integer({"PTTL", "leased"});
    EXPECT_GT(pttl, 5000);
    EXPECT_LE(pttl, 7000);
    lock.unlock();
}

TEST_F(Layout, BracedNamesKeepTheirOwnTag) {
    Client client(config());
    Lock lock(client, "{user:7}:cart");
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_lock__channel:{user:7}:cart"});
    lock.lock();
    lock.unlock();
    auto message = listener.read_reply();
    EXPECT_EQ(std::string(message->element[1]->str), "redisson_lock__channel:{user:7}:cart");
}

TEST_F(Layout, RedissonPeerExcludesAndWakesHoldfast) {
    Client client(config());
    Lock lock(client, "shared");
    ASSERT_EQ(java_lock("shared")->type, REDIS_REPLY_NIL);
    EXPECT_FALSE(lock.try_lock());

    auto waiter = std::async(std::launch::async, [&] { return lock.try_lock_for(std::chrono::seconds(20)); });
    // The waiter is asleep on the channel (the Java lease is 30 s, so only the message can wake it in time).
    ASSERT_TRUE(eventually([&] {
        auto r = raw->command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{shared}"});
        return r->element[1]->integer == 1;
    }));
    auto reply = java_unlock("shared");
    ASSERT_EQ(reply->type, REDIS_REPLY_INTEGER);
    EXPECT_EQ(reply->integer, 1);
    ASSERT_EQ(waiter.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    EXPECT_TRUE(waiter.get());
}

TEST_F(Layout, HoldfastExcludesRedissonPeer) {
    Client client(config());
    Lock lock(client, "shared");
    lock.lock();
    lock.lock();
    auto refused = java_lock("shared");
    ASSERT_EQ(refused->type, REDIS_REPLY_INTEGER);  // the PTTL, as Redisson expects
    EXPECT_GT(refused->integer, 0);
    // The peer's unlock is refused (nil: IllegalMonitorStateException in Java).
    EXPECT_EQ(java_unlock("shared")->type, REDIS_REPLY_NIL);
    lock.unlock();
    lock.unlock();
    EXPECT_EQ(java_lock("shared")->type, REDIS_REPLY_NIL);
}

}  // namespace
}  // namespace holdfast::testing
