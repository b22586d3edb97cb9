// Redis Cluster with a replica per master: replica sync goes to the master of
// the lock's slot, and the client follows a failover (CLUSTER FAILOVER, a
// primary killed) with its holds, renewals and waiters.
#include <atomic>
#include <future>

#include "core/client_core.hpp"
#include "redis_cluster.hpp"
#include "redis_fixture.hpp"
#include "transport/cluster.hpp"

namespace holdfast::testing {
namespace {

class ClusterFailoverTest : public ::testing::Test {
protected:
    void SetUp() override {
        // A low node timeout: a killed primary is failed over within seconds.
        cluster = std::make_unique<support::RedisCluster>(support::ClusterOptions{
            .masters = 3, .replicas = 1, .node_timeout_ms = 1500, .extra = {"--repl-diskless-sync-delay", "0"}});
        for (std::size_t i = 0; i < cluster->size(); ++i) node(i).command({"CONFIG", "RESETSTAT"});
    }

    Config config(ReplicaSync mode = ReplicaSync::required, std::chrono::milliseconds sync_timeout = 2500ms) const {
        Config c = Config::from_uri(cluster->url());
        c.replica_sync = mode;
        c.replica_sync_timeout = sync_timeout;
        return c;
    }
    support::SyncRedis node(std::size_t i) const { return support::SyncRedis(cluster->port(i)); }
    // A name whose slot node `primary` serves; another name in a given slot.
    std::string name_on(std::size_t primary, const std::string& prefix) const {
        for (int i = 0;; ++i)
            if (cluster->owner_of(detail::key_slot(prefix + std::to_string(i))) == primary) return prefix + std::to_string(i);
    }
    static std::string name_in_slot(std::size_t slot, const std::string& prefix) {
        for (int i = 0;; ++i)
            if (detail::key_slot(prefix + std::to_string(i)) == slot) return prefix + std::to_string(i);
    }
    // Calls of `command` (lowercase) on node i since the last CONFIG RESETSTAT.
    long long calls(std::size_t i, const std::string& command) const {
        const std::string info = node(i).string({"INFO", "commandstats"});
        const std::string tag = "cmdstat_" + command + ":calls=";
        const auto at = info.find(tag);
        return at == std::string::npos ? 0 : std::stoll(info.substr(at + tag.size()));
    }
    // A waiter on a client of its own, for up to 60 s.
    std::future<bool> waiter_on(Client& client, const std::string& name) {
        return std::async(std::launch::async, [&client, name] {
            Lock lock(client, name);
            const bool got = lock.try_lock_for(std::chrono::seconds(60));
            if (got) lock.unlock();
            return got;
        });
    }
    long long shard_subscribers(std::size_t i, const std::string& name) const {
        return node(i).command({"PUBSUB", "SHARDNUMSUB", "redisson_lock__channel:{" + name + "}"})->element[1]->integer;
    }

    void expect_waiter_follows(ShardedSubscription mode);

    std::unique_ptr<support::RedisCluster> cluster;
};

TEST_F(ClusterFailoverTest, TheWaitGoesToTheMasterOfTheLocksSlot) {
    Client client(config());
    const std::string name = name_on(1, "synced-");
    Lock lock(client, name);
    lock.lock();
    lock.unlock();
    EXPECT_EQ(calls(1, "wait"), 2);  // after the acquire and after the release
    for (std::size_t i : {0u, 2u}) EXPECT_EQ(calls(i, "wait"), 0) << "node " << i;
    EXPECT_EQ(calls(cluster->replica_of(1), "wait"), 0);
}

TEST_F(ClusterFailoverTest, RequiredGivesBackWhatTheSlotsReplicaDidNotGet) {
    Client client(config(ReplicaSync::required, 300ms));
    const std::string name = name_on(1, "unsynced-");
    cluster->node(cluster->replica_of(1)).pause();
    Lock lock(client, name);
    try {
        lock.try_lock();  // a try: a wait would go on until a replica confirms
        FAIL() << "taken without its replica";
    } catch (const ReplicaSyncError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("'" + name + "'"), std::string::npos) << what;
        EXPECT_NE(what.find("127.0.0.1:" + std::to_string(cluster->port(1))), std::string::npos) << what;
    }
    EXPECT_EQ(node(1).integer({"EXISTS", name}), 0) << "the unsynced hold was not given back";
    // Another master's replica runs: its locks are synced as usual.
    Lock elsewhere(client, name_on(2, "synced-"));
    EXPECT_TRUE(elsewhere.try_lock());
    elsewhere.unlock();
}

TEST_F(ClusterFailoverTest, WaitGoesOnWithoutTheSlotsReplica) {
    Client client(config(ReplicaSync::wait, 300ms));
    const std::string name = name_on(1, "best-effort-");
    cluster->node(cluster->replica_of(1)).pause();
    Lock lock(client, name);
    EXPECT_TRUE(lock.try_lock());
    EXPECT_EQ(node(1).string({"HGET", name, client.current_owner()}), "1");
    lock.unlock();
    EXPECT_EQ(calls(1, "wait"), 2);
}

// CLUSTER FAILOVER under a watchdog hold: renewals, the unlock and the
// waiter's wake-up all follow the slot to the promoted replica.
TEST_F(ClusterFailoverTest, AHeldLockFollowsAClusterFailover) {
    Config c = config();
    c.lock_watchdog_timeout = 3000ms;
    Client holder(c), other(c);
    const std::string name = name_on(1, "failed-over-");
    Lock lock(holder, name);
    lock.lock();
    auto woken = waiter_on(other, name);
    ASSERT_TRUE(eventually([&] { return shard_subscribers(1, name) == 1; }));
    const std::size_t promoted = cluster->replica_of(1);
    cluster->failover(promoted);
    ASSERT_EQ(cluster->owner_of(detail::key_slot(name)), promoted);
    // Held past two watchdog timeouts: only renewals at the new primary keep it.
    std::this_thread::sleep_for(6500ms);
    EXPECT_GT(node(promoted).integer({"PTTL", name}), 0);
    EXPECT_EQ(node(promoted).string({"HGET", name, holder.current_owner()}), "1");
    ASSERT_TRUE(eventually([&] { return shard_subscribers(promoted, name) == 1; }))
        << "the waiter did not subscribe again at the new primary";
    lock.unlock();
    ASSERT_EQ(woken.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(woken.get());
    EXPECT_EQ(node(promoted).integer({"EXISTS", name}), 0);
}

// kill -9 of a primary: its replica is promoted, the replicated hold is still
// there and renewed, new locks in the slot are taken there, the waiter wakes.
TEST_F(ClusterFailoverTest, TheClientResumesAfterAPrimaryIsKilled) {
    Config c = config();
    c.lock_watchdog_timeout = 6000ms;  // outlasts the failover (node timeout 1.5 s, then the election)
    Client holder(c), other(c);
    const std::string name = name_on(1, "killed-");
    const std::size_t slot = detail::key_slot(name);
    Lock lock(holder, name);
    lock.lock();  // replica sync required: the replica has it
    auto woken = waiter_on(other, name);
    ASSERT_TRUE(eventually([&] { return shard_subscribers(1, name) == 1; }));
    const std::size_t promoted = cluster->replica_of(1);
    cluster->node(1).kill();
    cluster->wait_for_owner(slot, promoted, 30s);
    EXPECT_EQ(node(promoted).string({"HGET", name, holder.current_owner()}), "1") << "the replicated hold was lost";

    Lock fresh(other, name_in_slot(slot, "fresh-"));
    ASSERT_TRUE(eventually([&] { return fresh.try_lock(); }, 30s)) << "no new lock in the failed-over slot";
    EXPECT_EQ(node(promoted).integer({"EXISTS", fresh.name()}), 1);
    fresh.unlock();

    std::this_thread::sleep_for(7000ms);  // past a watchdog timeout: renewed at the new primary
    EXPECT_GT(node(promoted).integer({"PTTL", name}), 0);
    ASSERT_TRUE(eventually([&] { return shard_subscribers(promoted, name) == 1; }, 30s))
        << "the waiter did not subscribe again at the new primary";
    lock.unlock();
    ASSERT_EQ(woken.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(woken.get());

    cluster->node(1).restart();  // comes back as the replica of the one that replaced it
    cluster->wait_for_replicas(30s);
    EXPECT_EQ(cluster->replica_of(promoted), 1u);
}

// Commands for a slot whose primary is down wait for its promoted replica and
// then go in the order they came, each parked at its own moment: a give-back
// parked there must not run after the same owner's next acquire (RELIABILITY.md,
// finding 8, where a parked give-back deleted the owner's next hold).
TEST_F(ClusterFailoverTest, CommandsParkedBehindADeadPrimaryKeepTheirOrder) {
    Config c = config(ReplicaSync::off);
    c.timeout = 30s;  // outlasts the failover
    Client client(c);
    auto& transport = detail::core_of(client).transport;
    const std::string key = name_on(1, "order-");
    const std::size_t slot = detail::key_slot(key);
    const std::size_t promoted = cluster->replica_of(1);
    auto run = [&](std::vector<std::string> args) {
        auto done = std::make_shared<std::promise<detail::Failure>>();
        auto outcome = done->get_future();
        std::vector<std::string_view> views(args.begin(), args.end());
        transport.execute(key, views, [done](detail::Failure e, detail::Reply) { done->set_value(e); });
        return outcome;
    };
    ASSERT_FALSE(run({"SET", key + ":probe", "1"}).get());
    cluster->node(1).kill();
    std::vector<std::future<detail::Failure>> pushed;
    for (int i = 0; i < 30; ++i) {
        pushed.push_back(run({"RPUSH", key, std::to_string(i)}));
        std::this_thread::sleep_for(7ms);  // each parked at another moment of the retry timer's period
    }
    // The first ones may reach the dead socket before the client sees it go
    // (a lost connection: not run on the dead node, and not retried).
    std::vector<std::string> ran;
    for (int i = 0; i < 30; ++i) {
        ASSERT_EQ(pushed[i].wait_for(60s), std::future_status::ready);
        if (!pushed[i].get()) ran.push_back(std::to_string(i));
    }
    ASSERT_GE(ran.size(), 20u) << "commands waiting for the promotion failed";
    EXPECT_EQ(cluster->owner_of(slot), promoted);
    auto list = node(promoted).command({"LRANGE", key, "0", "-1"});
    std::vector<std::string> stored;
    for (std::size_t i = 0; i < list->elements; ++i) stored.emplace_back(list->element[i]->str);
    EXPECT_EQ(stored, ran) << "the slot's commands ran in another order than they came";
    cluster->node(1).restart();
    cluster->wait_for_replicas(30s);
}

// Between a primary's failure and its replica's promotion every node answers
// CLUSTERDOWN (cluster-require-full-coverage): locks on the other masters are
// retried through it, not failed.
TEST_F(ClusterFailoverTest, LocksOnTheOtherMastersGoOnThroughAFailover) {
    Client client(config());
    const std::string name = name_on(0, "bystander-");
    const std::size_t slot = detail::key_slot(name_on(1, "failing-"));
    std::atomic<bool> done{false};
    auto rounds = std::async(std::launch::async, [&] {
        Lock lock(client, name);
        int taken = 0;
        for (; !done; ++taken) {
            lock.lock();
            lock.unlock();
        }
        return taken;
    });
    const std::size_t promoted = cluster->replica_of(1);
    cluster->node(1).kill();
    cluster->wait_for_owner(slot, promoted, 30s);
    done = true;
    EXPECT_GT(rounds.get(), 0);  // rethrows what a round threw
}

// A waiter whose client has nothing in flight, its subscription on a master
// that is killed: the client reads the map again while a master is down, the
// subscription moves to the promoted replica and the waiter tries again at
// once, so a release made after the promotion wakes it within 3 s, not at the
// holder's TTL (20 s here).
void ClusterFailoverTest::expect_waiter_follows(ShardedSubscription mode) {
    Config c = config();
    c.sharded_subscription = mode;
    c.lock_watchdog_timeout = 20000ms;
    Client holder(c), other(c);
    // Sharded subscriptions live on the lock's master, classic ones on slot
    // 0's: the lock is put on that master too, so the kill hits both.
    const std::size_t victim = cluster->owner_of(0);
    const std::string name = name_on(victim, "followed-");
    Lock lock(holder, name);
    lock.lock();
    auto woken = std::async(std::launch::async, [&other, name] {
        Lock wanted(other, name);
        const bool got = wanted.try_lock_for(std::chrono::seconds(60));
        const auto at = std::chrono::steady_clock::now();
        if (got) wanted.unlock();
        return std::pair{got, at};
    });
    const std::string channel = "redisson_lock__channel:{" + name + "}";
    const bool sharded = mode == ShardedSubscription::on;
    ASSERT_TRUE(eventually([&] {
        return node(victim).command({"PUBSUB", sharded ? "SHARDNUMSUB" : "NUMSUB", channel})->element[1]->integer == 1;
    }));
    const std::size_t promoted = cluster->replica_of(victim);
    cluster->node(victim).kill();
    cluster->wait_for_owner(detail::key_slot(name), promoted, 30s);
    lock.unlock();
    const auto released = std::chrono::steady_clock::now();
    ASSERT_EQ(woken.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    const auto [got, at] = woken.get();
    EXPECT_TRUE(got);
    EXPECT_LT(at - released, std::chrono::seconds(3)) << "the waiter slept to the holder's TTL";
}

TEST_F(ClusterFailoverTest, AShardedWaiterFollowsItsSubscriptionToThePromotedReplica) {
    expect_waiter_follows(ShardedSubscription::on);
}

TEST_F(ClusterFailoverTest, AClassicWaiterFollowsItsSubscriptionToThePromotedReplica) {
    expect_waiter_follows(ShardedSubscription::off);
}

}  // namespace
}  // namespace holdfast::testing
