// The raw keys, fields, TTLs and channel are Redisson's RReadWriteLock's, and
// a Redisson peer (tests/rwlock/redisson_rwlock.lua, written from
// docs/redisson-layout.md) shares the lock.
#include <future>

#include "holdfast_scripts.hpp"
#include "redisson_peer.hpp"
#include "rwlock_fixture.hpp"

namespace holdfast::testing {
namespace {

class ReadWriteLayout : public ReadWriteTest {
protected:
    support::ReplyPtr java_read_lock(const std::string& name, const std::string& lease = "30000") {
        return peer(name).read_lock(lease);
    }
    support::ReplyPtr java_read_unlock(const std::string& name) { return peer(name).read_unlock(); }
    support::ReplyPtr java_write_lock(const std::string& name) { return peer(name).write_lock(); }
    support::ReplyPtr java_write_unlock(const std::string& name) { return peer(name).write_unlock(); }
    // Keys other than the unlock latches a Redisson peer leaves for a while.
    long long lock_keys() {
        long long n = 0;
        auto reply = raw->command({"KEYS", "*"});
        for (std::size_t i = 0; i < reply->elements; ++i)
            if (!std::string(reply->element[i]->str).starts_with("redisson_unlock_latch:")) ++n;
        return n;
    }

private:
    // One Java client per lock: each unlock gets its own latch, as each Redisson unlock does.
    RedissonReadWriteLockPeer& peer(const std::string& name) {
        return peers_.try_emplace(name, *raw, name).first->second;
    }
    std::map<std::string, RedissonReadWriteLockPeer> peers_;
};

TEST_F(ReadWriteLayout, EmbeddedScriptsMatchScriptLoad) {
    for (const auto* script : {&scripts::rwlock_read_acquire, &scripts::rwlock_read_release,
                               &scripts::rwlock_read_renew, &scripts::rwlock_write_acquire,
                               &scripts::rwlock_write_release, &scripts::rwlock_force_unlock}) {
        EXPECT_EQ(raw->string({"SCRIPT", "LOAD", script->body}), script->sha1) << script->name;
    }
}

TEST_F(ReadWriteLayout, ReadHoldsAreRedissons) {
    Client client(config());
    ReadWriteLock rw(client, "stock");
    const std::string owner = client.current_owner();
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_rwlock:{stock}"});

    rw.read_lock().lock();
    rw.read_lock().lock();
    EXPECT_EQ(raw->string({"TYPE", "stock"}), "hash");
    EXPECT_EQ(fields("stock"), (std::map<std::string, std::string>{{"mode", "read"}, {owner, "2"}}));
    for (const auto& key : {std::string("stock"), hold_key("stock", owner, 1), hold_key("stock", owner, 2)}) {
        const long long pttl = raw->integer({"PTTL", key});
        EXPECT_GT(pttl, 25000) << key;  // the 30 s watchdog lease
        EXPECT_LE(pttl, 30000) << key;
    }
    EXPECT_EQ(raw->string({"GET", hold_key("stock", owner, 1)}), "1");
    EXPECT_EQ(raw->integer({"DBSIZE"}), 3);  // nothing else written
    rw.read_lock().unlock();
    EXPECT_EQ(raw->integer({"EXISTS", hold_key("stock", owner, 2)}), 0);  // the newest hold's key goes first
    EXPECT_EQ(raw->integer({"EXISTS", hold_key("stock", owner, 1)}), 1);
    rw.read_lock().unlock();

    expect_message(listener, "redisson_rwlock:{stock}", "0");
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(ReadWriteLayout, TheWriteHoldIsRedissons) {
    Client client(config());
    ReadWriteLock rw(client, "stock");
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_rwlock:{stock}"});

    rw.write_lock().lock(std::chrono::milliseconds(7000));
    EXPECT_EQ(fields("stock"),
              (std::map<std::string, std::string>{{"mode", "write"}, {client.current_owner() + ":write", "1"}}));
    const long long pttl = raw->integer({"PTTL", "stock"});
    EXPECT_GT(pttl, 5000);
    EXPECT_LE(pttl, 7000);
    EXPECT_EQ(raw->integer({"DBSIZE"}), 1);
    rw.write_lock().unlock();

    expect_message(listener, "redisson_rwlock:{stock}", "1");  // wakes every waiter
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(ReadWriteLayout, BracedNamesKeepTheirOwnTag) {
    Client client(config());
    ReadWriteLock rw(client, "{user:7}:cart");
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_rwlock:{user:7}:cart"});
    rw.read_lock().lock();
    EXPECT_EQ(raw->string({"GET", "{user:7}:cart:" + client.current_owner() + ":rwlock_timeout:1"}), "1");
    rw.read_lock().unlock();
    expect_message(listener, "redisson_rwlock:{user:7}:cart", "0");
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(ReadWriteLayout, ARedissonReaderSharesWithHoldfastAndExcludesItsWriter) {
    Client client(config());
    ReadWriteLock rw(client, "stock");
    ASSERT_EQ(java_read_lock("stock")->type, REDIS_REPLY_NIL);
    EXPECT_FALSE(rw.write_lock().try_lock());
    EXPECT_TRUE(rw.read_lock().try_lock());
    // Redisson's own unlock finds holdfast's hold key and keeps the lock for it.
    auto reply = java_read_unlock("stock");
    ASSERT_EQ(reply->type, REDIS_REPLY_INTEGER);
    EXPECT_EQ(reply->integer, 0);
    EXPECT_GT(raw->integer({"PTTL", "stock"}), 25000);
    EXPECT_TRUE(rw.read_lock().is_held_by_current_thread());
    rw.read_lock().unlock();
    EXPECT_EQ(lock_keys(), 0);
}

TEST_F(ReadWriteLayout, HoldfastReadersExcludeARedissonWriter) {
    Client client(config());
    ReadWriteLock rw(client, "stock");
    rw.read_lock().lock();
    auto refused = java_write_lock("stock");
    ASSERT_EQ(refused->type, REDIS_REPLY_INTEGER);  // the PTTL, as Redisson expects
    EXPECT_GT(refused->integer, 0);
    EXPECT_EQ(java_read_lock("stock")->type, REDIS_REPLY_NIL);  // but readers share
    EXPECT_EQ(java_read_unlock("stock")->integer, 0);
    rw.read_lock().unlock();
    EXPECT_EQ(java_write_lock("stock")->type, REDIS_REPLY_NIL);
    EXPECT_EQ(java_write_unlock("stock")->integer, 1);
    EXPECT_EQ(lock_keys(), 0);
}

TEST_F(ReadWriteLayout, AHoldfastWriterExcludesRedissonPeers) {
    Client client(config());
    ReadWriteLock rw(client, "stock");
    rw.write_lock().lock();
    rw.write_lock().lock();
    rw.read_lock().lock();  // downgrade
    auto refused = java_read_lock("stock");
    ASSERT_EQ(refused->type, REDIS_REPLY_INTEGER);
    EXPECT_GT(refused->integer, 0);
    EXPECT_EQ(java_write_lock("stock")->type, REDIS_REPLY_INTEGER);
    // The peer's unlocks are refused (nil: IllegalMonitorStateException in Java).
    EXPECT_EQ(java_write_unlock("stock")->type, REDIS_REPLY_NIL);
    EXPECT_EQ(java_read_unlock("stock")->type, REDIS_REPLY_NIL);
    rw.write_lock().unlock();
    rw.write_lock().unlock();
    EXPECT_EQ(raw->string({"HGET", "stock", "mode"}), "read");
    EXPECT_EQ(java_read_lock("stock")->type, REDIS_REPLY_NIL);
    EXPECT_EQ(java_read_unlock("stock")->integer, 0);
    rw.read_lock().unlock();
    EXPECT_EQ(lock_keys(), 0);
}

TEST_F(ReadWriteLayout, ARedissonWriteUnlockWakesHoldfastReaders) {
    Client client(config());
    ReadWriteLock rw(client, "stock");
    ASSERT_EQ(java_write_lock("stock")->type, REDIS_REPLY_NIL);
    std::vector<std::future<bool>> readers;
    for (int i = 0; i < 3; ++i)
        readers.push_back(std::async(std::launch::async, [&] {
            const bool got = rw.read_lock().try_lock_for(std::chrono::seconds(20));
            if (got) rw.read_lock().unlock();
            return got;
        }));
    // Asleep on the channel: the Java lease is 30 s, so only the message wakes them in time.
    ASSERT_TRUE(eventually([&] { return subscribers(channel("stock")) == 1; }));
    EXPECT_EQ(java_write_unlock("stock")->integer, 1);
    for (auto& r : readers) {
        ASSERT_EQ(r.wait_for(std::chrono::seconds(5)), std::future_status::ready);
        EXPECT_TRUE(r.get());
    }
    EXPECT_EQ(lock_keys(), 0);
}

}  // namespace
}  // namespace holdfast::testing
