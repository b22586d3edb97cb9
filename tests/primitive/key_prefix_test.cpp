// Config::key_prefix (Redisson's nameMapper, docs/redisson-layout.md
// "Names"): every key and channel a client touches carries it, derived as
// Redisson derives them from the mapped name, so a Java peer with the same
// mapper shares the lock; clients under other prefixes share nothing;
// inspect() and find_names() take and give names without it.
#include <future>
#include <set>

#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

class KeyPrefix : public RedisTest {
protected:
    Config prefixed(const std::string& prefix) const {
        Config c = config();
        c.key_prefix = prefix;
        return c;
    }

    std::set<std::string> keys() const {
        std::set<std::string> found;
        auto reply = raw->command({"KEYS", "*"});  // a test's own server: KEYS is fine here
        for (std::size_t i = 0; i < reply->elements; ++i) found.insert(reply->element[i]->str);
        return found;
    }
};

// Every primitive, held or waited for at once: each key in the database, and
// each channel anything was published on, carries the prefix, in the places
// Redisson's mapped name puts it.
TEST_F(KeyPrefix, EveryKeyAndChannelOfEveryPrimitiveCarriesIt) {
    support::SyncRedis listener(server->port());
    listener.command({"PSUBSCRIBE", "*"});
    Client client(prefixed("app1:"));
    const std::string me = client.current_owner();

    Lock lock(client, "l");
    lock.lock();
    FairLock fair(client, "f");
    fair.lock();
    const std::string fair_waiter = client.new_owner();
    auto queued = fair.async_try_lock(fair_waiter, 30s);
    ASSERT_TRUE(eventually([&] { return raw->integer({"LLEN", "redisson_lock_queue:{app1:f}"}) == 1; }));
    EXPECT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{app1:f}:" + fair_waiter) == 1; }));
    SpinLock spin(client, "s");
    spin.lock();
    FencedLock fenced(client, "fe");
    fenced.lock_and_get_token();
    ReadWriteLock rw(client, "rw");
    rw.read_lock().lock();
    Semaphore semaphore(client, "sem");
    ASSERT_TRUE(semaphore.try_set_permits(2));
    semaphore.acquire();
    PermitExpirableSemaphore permits(client, "pes");
    ASSERT_TRUE(permits.try_set_permits(1));
    const std::string permit = permits.acquire(60s);
    CountDownLatch latch(client, "latch");
    ASSERT_TRUE(latch.try_set_count(1));
    SimpleLock simple(client, "simple");
    simple.lock();

    const std::set<std::string> expected{"app1:l",
                                         "app1:f",
                                         "redisson_lock_queue:{app1:f}",
                                         "redisson_lock_timeout:{app1:f}",
                                         "holdfast_fair_alive:{app1:f}",
                                         "app1:s",
                                         "app1:fe",
                                         "redisson_lock_token:{app1:fe}",
                                         "app1:rw",
                                         "{app1:rw}:" + me + ":rwlock_timeout:1",
                                         "app1:sem",
                                         "app1:pes",
                                         "{app1:pes}:timeout",
                                         "app1:latch",
                                         "app1:simple"};
    EXPECT_EQ(keys(), expected);
    EXPECT_EQ(lock.name(), "app1:l");  // name() is the key

    lock.unlock();
    fair.unlock();  // wakes the waiter on its own channel
    ASSERT_EQ(queued.wait_for(10s), std::future_status::ready);
    ASSERT_TRUE(queued.get());
    fair.async_release(fair_waiter).get();
    spin.unlock();
    fenced.unlock();
    rw.read_lock().unlock();
    rw.write_lock().lock();
    rw.write_lock().unlock();
    semaphore.release();
    permits.release(permit);
    latch.count_down();
    simple.unlock();
    raw->command({"PUBLISH", "test:end", "."});

    std::set<std::string> channels;
    for (;;) {
        auto message = listener.read_reply();
        if (message->elements != 4) continue;  // the PSUBSCRIBE confirmation
        const std::string channel = message->element[2]->str;
        if (channel == "test:end") break;
        channels.insert(channel);
    }
    const std::set<std::string> published{"redisson_lock__channel:{app1:l}",
                                          "redisson_lock__channel:{app1:f}:" + fair_waiter,
                                          "redisson_lock__channel:{app1:fe}",
                                          "redisson_rwlock:{app1:rw}",
                                          "redisson_sc:{app1:sem}",
                                          "redisson_sc:{app1:pes}",
                                          "redisson_countdownlatch__channel__{app1:latch}"};
    EXPECT_EQ(channels, published);
    EXPECT_EQ(keys(), (std::set<std::string>{"redisson_lock_token:{app1:fe}", "app1:sem", "app1:pes"}));
}

// A Java service whose NameMapper maps "orders" to "app1:orders" holds the
// lock (Redisson's hash and TTL, written raw): the holdfast client is refused,
// waits on the mapped name's channel, and takes the lock at the Java unlock's
// message.
TEST_F(KeyPrefix, ARedissonPeerWithTheSameNameMapperSharesTheLock) {
    const std::string java = "6c1d6f7e-5e2b-4b7a-9d55-0b8f1a2c3d4e:87";
    raw->command({"HSET", "app1:orders", java, "1"});
    raw->command({"PEXPIRE", "app1:orders", "60000"});
    Client client(prefixed("app1:"));
    Lock lock(client, "orders");
    EXPECT_FALSE(lock.try_lock());
    auto waiter = lock.async_try_lock(client.new_owner(), 30s);
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{app1:orders}") == 1; }));
    raw->command({"DEL", "app1:orders"});
    raw->command({"PUBLISH", "redisson_lock__channel:{app1:orders}", "0"});  // Redisson's unlock message
    ASSERT_EQ(waiter.wait_for(5s), std::future_status::ready);  // well before the 60 s TTL
    EXPECT_TRUE(waiter.get());
    EXPECT_EQ(raw->integer({"EXISTS", "app1:orders"}), 1);
}

// The same name under two prefixes is two locks; under one prefix, one lock.
TEST_F(KeyPrefix, OtherPrefixesShareNothingTheSamePrefixShares) {
    Client a(prefixed("a:")), b(prefixed("b:")), also_a(prefixed("a:")), bare(config());
    Lock in_a(a, "orders"), in_b(b, "orders"), again_in_a(also_a, "orders"), unprefixed(bare, "orders");
    ASSERT_TRUE(in_a.try_lock());
    EXPECT_TRUE(in_b.try_lock());
    EXPECT_TRUE(unprefixed.try_lock());
    EXPECT_FALSE(again_in_a.try_lock());
    EXPECT_EQ(keys(), (std::set<std::string>{"a:orders", "b:orders", "orders"}));
    in_a.unlock();
    EXPECT_TRUE(again_in_a.try_lock());
    again_in_a.unlock();
    in_b.unlock();
    unprefixed.unlock();
}

// inspect() takes the name and reads the prefixed keys; find_names() lists
// only names under the prefix, without it, side keys standing for theirs.
TEST_F(KeyPrefix, InspectAndFindNamesSpeakNamesWithoutThePrefix) {
    Client client(prefixed("app1:"));
    Lock orders(client, "orders");
    orders.lock();
    // A free fair lock whose queue is all that is left of it: found by its queue.
    raw->command({"RPUSH", "redisson_lock_queue:{app1:ordering}", "java:1"});
    raw->command({"SET", "app1:other", "1"});
    raw->command({"SET", "unprefixed", "1"});
    raw->command({"SET", "b:orders", "1"});

    const LockState state = inspect(client, "orders");
    EXPECT_EQ(state.name, "orders");
    EXPECT_EQ(state.kind, LockState::Kind::lock);
    ASSERT_EQ(state.holders.size(), 1u);
    EXPECT_EQ(state.holders[0].owner, client.current_owner());
    EXPECT_EQ(inspect(client, "ordering").queue.size(), 1u);

    EXPECT_EQ(find_names(client), (std::vector<std::string>{"ordering", "orders", "other"}));
    EXPECT_EQ(find_names(client, "order*"), (std::vector<std::string>{"ordering", "orders"}));
    EXPECT_EQ(find_names(client, "orders"), (std::vector<std::string>{"orders"}));
    EXPECT_EQ(find_names(client, "app1:*"), std::vector<std::string>{});  // the pattern is for names
    orders.unlock();
}

// A prefix with glob characters is taken literally by find_names().
TEST_F(KeyPrefix, AGlobCharacterInThePrefixIsLiteral) {
    Client client(prefixed("t[1]*:"));
    Lock lock(client, "x");
    lock.lock();
    raw->command({"SET", "t1:y", "1"});   // would match the prefix read as a glob
    raw->command({"SET", "t[1]*:z", "1"});
    EXPECT_EQ(find_names(client), (std::vector<std::string>{"x", "z"}));
    lock.unlock();
}

// The watchdog renews the key the lock was taken under.
TEST_F(KeyPrefix, TheWatchdogRenewsThePrefixedKey) {
    Config c = prefixed("app1:");
    c.lock_watchdog_timeout = 300ms;
    Client client(c);
    Lock lock(client, "renewed");
    lock.lock();
    ASSERT_TRUE(eventually([&] { return client.metrics().primitives.at("lock").renewals >= 4; }));
    EXPECT_TRUE(lock.is_held_by_current_thread());  // 4 renewals in: past its first 300 ms lease
    EXPECT_GT(raw->integer({"PTTL", "app1:renewed"}), 0);
    EXPECT_EQ(client.metrics().primitives.at("lock").leases_lost, 0u);
    lock.unlock();
}

}  // namespace
}  // namespace holdfast::testing
