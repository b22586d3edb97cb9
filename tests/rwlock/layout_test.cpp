// The raw keys, fields, TTLs and channel are Redisson's RReadWriteLock's, and
// a Redisson peer (its own scripts, sent here verbatim as RedissonReadLock and
// RedissonWriteLock send them) shares the lock.
#include <future>

#include "holdfast_scripts.hpp"
#include "rwlock_fixture.hpp"

namespace holdfast::testing {
namespace {

// RedissonReadLock.tryLockInnerAsync: KEYS name, timeout prefix; ARGV lease, owner, owner:write.
const std::string redisson_read_acquire =
    "local mode = redis.call('hget', KEYS[1], 'mode'); "
    "if (mode == false) then "
    "redis.call('hset', KEYS[1], 'mode', 'read'); "
    "redis.call('hset', KEYS[1], ARGV[2], 1); "
    "redis.call('set', KEYS[2] .. ':1', 1); "
    "redis.call('pexpire', KEYS[2] .. ':1', ARGV[1]); "
    "redis.call('pexpire', KEYS[1], ARGV[1]); "
    "return nil; "
    "end; "
    "if (mode == 'read') or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then "
    "local ind = redis.call('hincrby', KEYS[1], ARGV[2], 1); "
    "local key = KEYS[2] .. ':' .. ind;"
    "redis.call('set', key, 1); "
    "redis.call('pexpire', key, ARGV[1]); "
    "local remainTime = redis.call('pttl', KEYS[1]); "
    "redis.call('pexpire', KEYS[1], math.max(remainTime, ARGV[1])); "
    "return nil; "
    "end;"
    "return redis.call('pttl', KEYS[1]);";

// RedissonReadLock.unlockInnerAsync: KEYS name, channel, timeout prefix, key
// prefix, unlock latch; ARGV message, owner, publish command, latch ttl.
const std::string redisson_read_release =
    "local val = redis.call('get', KEYS[5]); "
    "if val ~= false then "
    "return tonumber(val);"
    "end; "
    "local mode = redis.call('hget', KEYS[1], 'mode'); "
    "if (mode == false) then "
    "redis.call(ARGV[3], KEYS[2], ARGV[1]); "
    "redis.call('set', KEYS[5], 1, 'px', ARGV[4]); "
    "return 1; "
    "end; "
    "local lockExists = redis.call('hexists', KEYS[1], ARGV[2]); "
    "if (lockExists == 0) then "
    "return nil;"
    "end; "
    "local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1); "
    "if (counter == 0) then "
    "redis.call('hdel', KEYS[1], ARGV[2]); "
    "end;"
    "redis.call('del', KEYS[3] .. ':' .. (counter+1)); "
    "if (redis.call('hlen', KEYS[1]) > 1) then "
    "local maxRemainTime = -3; "
    "local keys = redis.call('hkeys', KEYS[1]); "
    "for n, key in ipairs(keys) do "
    "counter = tonumber(redis.call('hget', KEYS[1], key)); "
    "if type(counter) == 'number' then "
    "for i=counter, 1, -1 do "
    "local remainTime = redis.call('pttl', KEYS[4] .. ':' .. key .. ':rwlock_timeout:' .. i); "
    "maxRemainTime = math.max(remainTime, maxRemainTime);"
    "end; "
    "end; "
    "end; "
    "if maxRemainTime > 0 then "
    "redis.call('pexpire', KEYS[1], maxRemainTime); "
    "redis.call('set', KEYS[5], 0, 'px', ARGV[4]); "
    "return 0; "
    "end;"
    "if mode == 'write' then "
    "redis.call('set', KEYS[5], 0, 'px', ARGV[4]); "
    "return 0;"
    "end; "
    "end; "
    "redis.call('del', KEYS[1]); "
    "redis.call(ARGV[3], KEYS[2], ARGV[1]); "
    "redis.call('set', KEYS[5], 1, 'px', ARGV[4]); "
    "return 1; ";

// RedissonWriteLock.tryLockInnerAsync: KEYS name; ARGV lease, owner:write.
const std::string redisson_write_acquire =
    "local mode = redis.call('hget', KEYS[1], 'mode'); "
    "if (mode == false) then "
    "redis.call('hset', KEYS[1], 'mode', 'write'); "
    "redis.call('hset', KEYS[1], ARGV[2], 1); "
    "redis.call('pexpire', KEYS[1], ARGV[1]); "
    "return nil; "
    "end; "
    "if (mode == 'write') then "
    "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then "
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); "
    "local currentExpire = redis.call('pttl', KEYS[1]); "
    "redis.call('pexpire', KEYS[1], currentExpire + ARGV[1]); "
    "return nil; "
    "end; "
    "end;"
    "return redis.call('pttl', KEYS[1]);";

// RedissonWriteLock.unlockInnerAsync: KEYS name, channel, unlock latch;
// ARGV message, lease, owner:write, publish command, latch ttl.
const std::string redisson_write_release =
    "local val = redis.call('get', KEYS[3]); "
    "if val ~= false then "
    "return tonumber(val);"
    "end; "
    "local mode = redis.call('hget', KEYS[1], 'mode'); "
    "if (mode == false) then "
    "redis.call(ARGV[4], KEYS[2], ARGV[1]); "
    "redis.call('set', KEYS[3], 1, 'px', ARGV[5]); "
    "return 1; "
    "end;"
    "if (mode == 'write') then "
    "local lockExists = redis.call('hexists', KEYS[1], ARGV[3]); "
    "if (lockExists == 0) then "
    "return nil;"
    "else "
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); "
    "if (counter > 0) then "
    "redis.call('pexpire', KEYS[1], ARGV[2]); "
    "redis.call('set', KEYS[3], 0, 'px', ARGV[5]); "
    "return 0; "
    "else "
    "redis.call('hdel', KEYS[1], ARGV[3]); "
    "if (redis.call('hlen', KEYS[1]) == 1) then "
    "redis.call('del', KEYS[1]); "
    "redis.call(ARGV[4], KEYS[2], ARGV[1]); "
    "else "
    "redis.call('hset', KEYS[1], 'mode', 'read'); "
    "end; "
    "redis.call('set', KEYS[3], 1, 'px', ARGV[5]); "
    "return 1; "
    "end; "
    "end; "
    "end; "
    "return nil;";

const std::string java_owner = "6c1d6f7e-5e2b-4b7a-9d55-0b8f1a2c3d4e:87";

class ReadWriteLayout : public ReadWriteTest {
protected:
    // Each call gets its own unlock latch, as each Redisson unlock does.
    std::string latch(const std::string& name) {
        return "redisson_unlock_latch:{" + name + "}:" + std::to_string(++unlocks_) + "0123456789abcdef";
    }
    support::ReplyPtr java_read_lock(const std::string& name, const std::string& lease = "30000") {
        return raw->command({"EVAL", redisson_read_acquire, "2", name,
                             "{" + name + "}:" + java_owner + ":rwlock_timeout", lease, java_owner,
                             java_owner + ":write"});
    }
    support::ReplyPtr java_read_unlock(const std::string& name) {
        return raw->command({"EVAL", redisson_read_release, "5", name, channel(name),
                             "{" + name + "}:" + java_owner + ":rwlock_timeout", "{" + name + "}", latch(name), "0",
                             java_owner, "publish", "13000"});
    }
    support::ReplyPtr java_write_lock(const std::string& name) {
        return raw->command({"EVAL", redisson_write_acquire, "1", name, "30000", java_owner + ":write"});
    }
    support::ReplyPtr java_write_unlock(const std::string& name) {
        return raw->command({"EVAL", redisson_write_release, "3", name, channel(name), latch(name), "1", "30000",
                             java_owner + ":write", "publish", "13000"});
    }
    // Keys other than the unlock latches a Redisson peer leaves for a while.
    long long lock_keys() {
        long long n = 0;
        auto reply = raw->command({"KEYS", "*"});
        for (std::size_t i = 0; i < reply->elements; ++i)
            if (!std::string(reply->element[i]->str).starts_with("redisson_unlock_latch:")) ++n;
        return n;
    }

private:
    int unlocks_ = 0;
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
