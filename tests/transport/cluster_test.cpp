// Redis Cluster: routing by slot, MOVED and ASK, sharded and classic pub/sub,
// the watchdog and MultiLock across masters, on a real three-master cluster.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>

#include "cli/cli_process.hpp"
#include "core/client_core.hpp"
#include "holdfast_scripts.hpp"
#include "primitive/call.hpp"
#include "primitive/script_call.hpp"
#include "redis_cluster.hpp"
#include "redis_fixture.hpp"
#include "transport/cluster.hpp"

namespace holdfast::testing {
namespace {

class ClusterTest : public ::testing::Test {
protected:
    void SetUp() override { cluster = std::make_unique<support::RedisCluster>(3); }

    Config config() const { return Config::from_uri(cluster->url()); }
    std::size_t owner(const std::string& key) const { return cluster->owner_of(detail::key_slot(key)); }
    // A name whose slot node `node` serves.
    std::string name_on(std::size_t node, const std::string& prefix) const {
        for (int i = 0;; ++i)
            if (owner(prefix + std::to_string(i)) == node) return prefix + std::to_string(i);
    }
    long long on(std::size_t node, const std::vector<std::string>& command) const {
        return support::SyncRedis(cluster->port(node)).integer(command);
    }
    // Subscribers of `channel` over all nodes, classic or sharded.
    long long subscribers(const std::string& channel, bool sharded) const {
        long long total = 0;
        for (std::size_t i = 0; i < cluster->size(); ++i)
            total += support::SyncRedis(cluster->port(i))
                         .command({"PUBSUB", sharded ? "SHARDNUMSUB" : "NUMSUB", channel})
                         ->element[1]
                         ->integer;
        return total;
    }

    // A waiter on another client is woken by the unlock message long before
    // the holder's 60 s lease would have let it in.
    void expect_waiter_woken(const Config& c, bool sharded) {
        Client holder(c), waiter(c);
        EXPECT_EQ(detail::core_of(holder).transport.publish_command("queue", "redisson_lock__channel:{queue}"), sharded ? "spublish" : "publish");
        const std::string name = name_on(1, "woken-");
        const std::string channel = "redisson_lock__channel:{" + name + "}";
        Lock held(holder, name);
        held.lock(std::chrono::seconds(60));
        auto woken = std::async(std::launch::async, [&] {
            Lock lock(waiter, name);
            const bool got = lock.try_lock_for(std::chrono::seconds(30));
            if (got) lock.unlock();
            return got;
        });
        ASSERT_TRUE(eventually([&] { return subscribers(channel, sharded) == 1; }));
        EXPECT_EQ(subscribers(channel, !sharded), 0);
        const auto released = std::chrono::steady_clock::now();
        held.unlock();
        ASSERT_EQ(woken.wait_for(std::chrono::seconds(10)), std::future_status::ready);
        EXPECT_TRUE(woken.get());
        EXPECT_LT(std::chrono::steady_clock::now() - released, std::chrono::seconds(10));
        EXPECT_TRUE(eventually([&] { return subscribers(channel, sharded) == 0; }));
    }

    std::unique_ptr<support::RedisCluster> cluster;
};

TEST_F(ClusterTest, LocksOnEveryMasterFromOneClient) {
    Client client(config());
    for (std::size_t node = 0; node < cluster->size(); ++node) {
        const std::string name = name_on(node, "every-");
        Lock lock(client, name);
        lock.lock();
        EXPECT_EQ(on(node, {"HEXISTS", name, client.current_owner()}), 1) << name;
        EXPECT_TRUE(lock.is_held_by_current_thread());
        lock.unlock();
        EXPECT_EQ(on(node, {"EXISTS", name}), 0);
    }
}

TEST_F(ClusterTest, OneSeedReachesEveryMaster) {
    Client client("redis-cluster://127.0.0.1:" + std::to_string(cluster->port(0)));
    for (std::size_t node = 0; node < cluster->size(); ++node) {
        const std::string name = name_on(node, "seeded-");
        Lock lock(client, name);
        ASSERT_TRUE(lock.try_lock());
        EXPECT_EQ(on(node, {"EXISTS", name}), 1);
        lock.unlock();
    }
}

// A loopback port whose connects get no answer: a listener whose queue is
// full drops their SYNs, as a firewall or a dead host would.
class Unanswering {
public:
    Unanswering() {
        listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in at{};
        at.sin_family = AF_INET;
        at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t size = sizeof at;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&at), size) != 0 || ::listen(listener_, 0) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&at), &size) != 0)
            throw std::runtime_error("Unanswering: cannot listen");
        port_ = ntohs(at.sin_port);
        filler_ = ::socket(AF_INET, SOCK_STREAM, 0);  // fills the queue, never accepted
        if (::connect(filler_, reinterpret_cast<sockaddr*>(&at), size) != 0)
            throw std::runtime_error("Unanswering: cannot fill the queue");
    }
    ~Unanswering() {
        ::close(filler_);
        ::close(listener_);
    }
    std::uint16_t port() const { return port_; }

private:
    int listener_ = -1, filler_ = -1;
    std::uint16_t port_ = 0;
};

// Seeds that refuse connections (closed ports) or do not answer them are
// passed over for the next: each costs its one connect attempt, not
// Config::timeout (before, each cost a whole timeout: 3 dead seeds, 3 timeouts).
TEST_F(ClusterTest, DeadSeedsArePassedOverForTheNext) {
    Unanswering silent;
    std::string seeds;
    for (int i = 0; i < 3; ++i) seeds += "127.0.0.1:" + std::to_string(support::free_port()) + ",";
    seeds += "127.0.0.1:" + std::to_string(silent.port()) + ",127.0.0.1:" + std::to_string(cluster->port(1));
    Config c = Config::from_uri("redis-cluster://" + seeds);
    c.timeout = 20s;
    c.connect_timeout = 1s;  // the unanswered seed's cost
    const auto start = std::chrono::steady_clock::now();
    Client client(c);
    // Less than one timeout for all four dead seeds, where each took one before.
    EXPECT_LT(std::chrono::steady_clock::now() - start, c.timeout) << "a dead seed cost Config::timeout";
    const std::string name = name_on(2, "seeded-");
    Lock lock(client, name);
    ASSERT_TRUE(lock.try_lock());
    EXPECT_EQ(on(2, {"EXISTS", name}), 1);
    lock.unlock();
}

// No seed answers: the client fails naming each seed and what it did, without
// waiting a timeout per seed for reconnects that cannot help.
TEST(ClusterSeeds, NoLiveSeedFailsTheClientNamingEachSeed) {
    const auto first = support::free_port(), second = support::free_port();
    Config c = Config::from_uri("redis-cluster://127.0.0.1:" + std::to_string(first) + ",127.0.0.1:" +
                                std::to_string(second));
    c.timeout = 20s;
    const auto start = std::chrono::steady_clock::now();
    try {
        Client client(c);
        FAIL() << "a client with no live seed";
    } catch (const ConnectionError& e) {
        const std::string what = e.what();
        EXPECT_LT(std::chrono::steady_clock::now() - start, c.timeout) << what;
        for (const auto port : {first, second})
            EXPECT_NE(what.find("127.0.0.1:" + std::to_string(port) + " (cannot connect: Connection refused)"),
                      std::string::npos)
                << what;
        EXPECT_NE(what.find("check the seed addresses"), std::string::npos) << what;
    }
}

// A node announces an address nobody listens on (its cluster-announce-port
// set to a closed port here; in production, usually an address for another
// network): a command for its slots fails naming that address, what
// happened, and where such an address comes from, as behind Sentinel.
TEST_F(ClusterTest, ANodeAnnouncingAnAddressNobodyListensOnIsNamedWithWhereItCameFrom) {
    const support::ClosedPort closed;
    support::SyncRedis(cluster->port(0)).command({"CONFIG", "SET", "cluster-announce-port", std::to_string(closed.port())});
    Config c = Config::from_uri("redis-cluster://127.0.0.1:" + std::to_string(cluster->port(0)));
    c.timeout = 1s;
    std::string what;
    try {
        // The seed answers CLUSTER SLOTS, naming itself at the closed port:
        // the client's first command (to slot 0's node) fails.
        Client client(c);
        Lock lock(client, name_on(0, "far-"));
        lock.try_lock();
        FAIL() << "locked on a node nobody listens for";
    } catch (const ConnectionError& e) {
        what = e.what();
    }
    for (const std::string& part :
         {"the cluster announces 127.0.0.1:" + std::to_string(closed.port()), std::string("CLUSTER SLOTS"),
          std::string("Connection refused"), std::string("cluster-announce-ip"), std::string("Config::nat_map"),
          std::string("is the server running and reachable?")})
        EXPECT_NE(what.find(part), std::string::npos) << part << " missing in: " << what;
}

TEST_F(ClusterTest, NotAClusterIsRefusedByName) {
    support::RedisServer plain;
    try {
        Client client("redis-cluster://127.0.0.1:" + std::to_string(plain.port()));
        FAIL() << "a plain server taken for a cluster";
    } catch (const ServerError& e) {
        EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(plain.port())), std::string::npos) << e.what();
    }
}

// An error reply reaches the caller with its code, as text and as a value.
TEST_F(ClusterTest, ACrossSlotRefusalCarriesItsCode) {
    Client client(config());
    detail::Transport& transport = detail::core_of(client).transport;
    const std::string a = name_on(0, "cross"), b = name_on(1, "cross");
    try {
        detail::block<detail::Reply>(transport, [&](auto done) {
            detail::eval_reporting(transport, scripts::lock_force_unlock, {a, b}, {"0", "channel", "publish"}, a,
                                   "force-unlock", std::move(done));
        });
        FAIL() << "a script ran with keys in two slots";
    } catch (const ServerError& e) {
        EXPECT_EQ(e.code(), errc::cross_slot) << e.what();
        EXPECT_EQ(e.reply_code(), "CROSSSLOT");
        EXPECT_NE(std::string(e.what()).find("'" + a + "'"), std::string::npos) << e.what();
    }
}

TEST_F(ClusterTest, ShardedPubSubWakesAWaiter) {
    Config c = config();
    ASSERT_EQ(c.sharded_subscription, ShardedSubscription::automatic);  // Redisson's default: sharded on Redis 7
    expect_waiter_woken(c, true);
}

TEST_F(ClusterTest, ClassicPubSubWakesAWaiter) {
    Config c = config();
    c.sharded_subscription = ShardedSubscription::off;
    expect_waiter_woken(c, false);
}

// The server drops a sharded subscription when its slot moves away: the
// waiter's subscription follows it to the new master and the unlock wakes it.
TEST_F(ClusterTest, ShardedSubscriptionFollowsAMovedSlot) {
    Client holder(config()), waiter(config());
    const std::string name = name_on(1, "followed-");
    const std::string channel = "redisson_lock__channel:{" + name + "}";
    auto shard_subscribers = [&](std::size_t node) {
        return support::SyncRedis(cluster->port(node)).command({"PUBSUB", "SHARDNUMSUB", channel})->element[1]->integer;
    };
    Lock held(holder, name);
    held.lock(std::chrono::seconds(60));
    auto woken = std::async(std::launch::async, [&] {
        Lock lock(waiter, name);
        const bool got = lock.try_lock_for(std::chrono::seconds(40));
        if (got) lock.unlock();
        return got;
    });
    ASSERT_TRUE(eventually([&] { return shard_subscribers(1) == 1; }));
    cluster->move_slot(detail::key_slot(name), 2);
    ASSERT_TRUE(eventually([&] { return shard_subscribers(2) == 1; }));
    EXPECT_EQ(shard_subscribers(1), 0);
    const auto released = std::chrono::steady_clock::now();
    held.unlock();
    ASSERT_EQ(woken.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(woken.get());
    EXPECT_LT(std::chrono::steady_clock::now() - released, std::chrono::seconds(10));
}

// The slot of a held lock moves to another master: renewals follow MOVED,
// the lock is released there and taken again there.
TEST_F(ClusterTest, MovedSlotUnderAHeldLock) {
    Config c = config();
    c.lock_watchdog_timeout = std::chrono::milliseconds(1500);
    Client client(c);
    const std::string name = name_on(0, "moved-");
    Lock lock(client, name);
    lock.lock();
    cluster->move_slot(detail::key_slot(name), 1);
    ASSERT_EQ(owner(name), 1u);
    // Held past two watchdog timeouts: only renewals at the new master keep it.
    std::this_thread::sleep_for(std::chrono::milliseconds(3000));
    EXPECT_GT(on(1, {"PTTL", name}), 0);
    EXPECT_TRUE(lock.is_held_by_current_thread());
    lock.unlock();
    EXPECT_EQ(on(1, {"EXISTS", name}), 0);
    ASSERT_TRUE(lock.try_lock());
    EXPECT_EQ(on(1, {"EXISTS", name}), 1);
    lock.unlock();
}

// Mid-migration, a name missing at the old owner is taken at the new one
// (ASK, then ASKING + the script there), and released after the move.
TEST_F(ClusterTest, AskDuringAMigration) {
    Client client(config());
    const std::string name = name_on(2, "asked-");
    const auto slot = detail::key_slot(name);
    cluster->start_move(slot, 0);
    Lock lock(client, name);
    ASSERT_TRUE(lock.try_lock());
    support::SyncRedis target(cluster->port(0));
    target.command({"ASKING"});  // the importing node serves the slot to ASKING clients only
    EXPECT_EQ(target.integer({"EXISTS", name}), 1);
    cluster->finish_move(slot, 0);
    EXPECT_EQ(on(0, {"HEXISTS", name, client.current_owner()}), 1);
    lock.unlock();
    EXPECT_EQ(on(0, {"EXISTS", name}), 0);
}

// An unlock mid-migration finds its keys split (the lock moved, its channel
// exists nowhere): TRYAGAIN, retried until the move ends.
TEST_F(ClusterTest, UnlockDuringAMigrationWaitsForTheMove) {
    Client client(config());
    const std::string name = name_on(2, "split-");
    const auto slot = detail::key_slot(name);
    std::promise<void> taken, moving;
    auto unlocked = std::async(std::launch::async, [&] {  // a lock is its thread's: taken and released there
        Lock lock(client, name);
        if (!lock.try_lock()) throw std::runtime_error("not taken");
        taken.set_value();
        moving.get_future().wait();
        lock.unlock();
    });
    taken.get_future().wait();
    cluster->start_move(slot, 0);
    support::SyncRedis source(cluster->port(2));
    source.command({"MIGRATE", "127.0.0.1", std::to_string(cluster->port(0)), name, "0", "5000"});
    moving.set_value();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the unlock meets the migration
    cluster->finish_move(slot, 0);
    ASSERT_EQ(unlocked.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_NO_THROW(unlocked.get());
    EXPECT_EQ(on(0, {"EXISTS", name}), 0);
}

// Mid-migration, the lock's side keys for targeted wake-ups (not declared:
// docs/design.md) may be refused as keys of an unstable slot: the waiter
// waits and is woken as Redisson's are, and the holder's release works.
TEST_F(ClusterTest, AWaiterIsWokenWhileItsSlotMigrates) {
    Client holder(config()), other(config());
    const std::string name = name_on(2, "moving-");
    const auto slot = detail::key_slot(name);
    Lock held(holder, name), wanted(other, name);
    held.lock();
    cluster->start_move(slot, 0);
    auto waiting = wanted.async_lock(other.new_owner());
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{" + name + "}", true) +
                                            subscribers("redisson_lock__channel:{" + name + "}", false) == 1; }));
    EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
    EXPECT_NO_THROW(held.release());
    ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(waiting.get());
    cluster->finish_move(slot, 0);
}

// Script runs a node served and answered without an error: the NOSCRIPT
// of an EVALSHA followed by its EVAL counts once.
long long scripts_run(const support::RedisCluster& cluster, std::size_t node) {
    const auto reply = support::SyncRedis(cluster.port(node)).command({"INFO", "commandstats"});
    const std::string text(reply->str, reply->len);
    long long total = 0;
    for (const std::string command : {"evalsha", "eval"}) {
        const auto at = text.find("cmdstat_" + command + ":");
        if (at == std::string::npos) continue;
        const auto field = [&](const std::string& key) {
            const auto from = text.find(key + "=", at);
            return from == std::string::npos ? 0LL : std::stoll(text.substr(from + key.size() + 1));
        };
        total += field("calls") - field("failed_calls");
    }
    return total;
}

// Keys moving one at a time, as a reshard moves them: the lock already at
// its new owner, its list of waiters still at the old one. A waiter that
// meets the lock there (ASK) must not list itself in a copy of the list at
// the new owner: the list's own MIGRATE would then find it at both and fail
// (BUSYKEY), and the reshard could not end.
TEST_F(ClusterTest, AWaiterMidMigrationMakesNoSecondListOfWaiters) {
    Client holder(config()), first_client(config()), second_client(config());
    const std::string name = name_on(2, "listed-");
    const std::string waiters = "holdfast_lock_waiters:{" + name + "}";
    const std::string channel = "redisson_lock__channel:{" + name + "}";
    const auto slot = detail::key_slot(name);
    Lock held(holder, name), first(first_client, name), second(second_client, name);
    held.lock(std::chrono::seconds(60));
    const std::string first_owner = first_client.new_owner(), second_owner = second_client.new_owner();
    auto first_waits = first.async_lock(first_owner);
    ASSERT_TRUE(eventually([&] { return on(2, {"ZCARD", waiters}) == 1; }));
    cluster->start_move(slot, 0);
    support::SyncRedis(cluster->port(2)).command(
        {"MIGRATE", "127.0.0.1", std::to_string(cluster->port(0)), name, "0", "5000"});
    const long long before = scripts_run(*cluster, 0);
    auto second_waits = second.async_lock(second_owner);
    // Both its attempts, the second listing it, ran at the new owner.
    ASSERT_TRUE(eventually([&] {
        return subscribers(channel, true) + subscribers(channel, false) == 2 && scripts_run(*cluster, 0) >= before + 2;
    }));
    support::SyncRedis target(cluster->port(0));
    target.command({"ASKING"});
    EXPECT_EQ(target.integer({"EXISTS", waiters}), 0) << "a second list of waiters at the new owner";
    EXPECT_NO_THROW(cluster->finish_move(slot, 0));
    // The list moved (the second waiter may list itself there now: its
    // sharded channel moved too, and a resubscribed waiter tries again).
    EXPECT_GE(on(0, {"ZCARD", waiters}), 1);
    held.unlock();
    ASSERT_EQ(first_waits.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(first_waits.get());
    first.async_release(first_owner).get();
    ASSERT_EQ(second_waits.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(second_waits.get());
    second.async_release(second_owner).get();
}

// The same for a release's promise: the lock and its list at the new owner,
// a promise still at the old one (here one made up, that lasts 2 s). The
// release there names its first waiter but makes no second promise, and the
// waiter takes the lock once the old promise has lapsed.
TEST_F(ClusterTest, AReleaseMidMigrationMakesNoSecondPromise) {
    Client holder(config()), waiter_client(config());
    const std::string name = name_on(2, "promised-");
    const std::string waiters = "holdfast_lock_waiters:{" + name + "}";
    const std::string promise = "holdfast_lock_handoff:{" + name + "}";
    const auto slot = detail::key_slot(name);
    Lock held(holder, name), wanted(waiter_client, name);
    held.lock(std::chrono::seconds(60));
    const std::string owner = waiter_client.new_owner();
    auto waits = wanted.async_lock(owner);
    ASSERT_TRUE(eventually([&] { return on(2, {"ZCARD", waiters}) == 1; }));
    support::SyncRedis source(cluster->port(2));
    source.command({"SET", promise, "1", "PX", "2000"});
    cluster->start_move(slot, 0);
    for (const std::string& key : {name, waiters})
        source.command({"MIGRATE", "127.0.0.1", std::to_string(cluster->port(0)), key, "0", "5000"});
    held.unlock();
    support::SyncRedis target(cluster->port(0));
    target.command({"ASKING"});
    EXPECT_EQ(target.integer({"EXISTS", promise}), 0) << "a second promise at the new owner";
    EXPECT_NO_THROW(cluster->finish_move(slot, 0));
    ASSERT_EQ(waits.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    EXPECT_TRUE(waits.get());
    wanted.async_release(owner).get();
}

TEST_F(ClusterTest, MultiLockAcrossMasters) {
    Client client(config());
    Lock a(client, name_on(0, "multi-")), b(client, name_on(1, "multi-")), c(client, name_on(2, "multi-"));
    MultiLock all(a, b, c);
    all.lock();
    for (std::size_t node = 0; node < 3; ++node)
        EXPECT_EQ(on(node, {"HEXISTS", name_on(node, "multi-"), client.current_owner()}), 1);
    all.unlock();
    for (std::size_t node = 0; node < 3; ++node) EXPECT_EQ(on(node, {"EXISTS", name_on(node, "multi-")}), 0);
}

TEST_F(ClusterTest, WatchdogRenewsOnEveryMaster) {
    Config c = config();
    c.lock_watchdog_timeout = std::chrono::milliseconds(1000);
    Client client(c);
    std::vector<std::unique_ptr<Lock>> locks;
    for (std::size_t node = 0; node < 3; ++node)
        for (int i = 0; i < 2; ++i) {  // two per master, each in its own slot: a batch per slot
            locks.push_back(std::make_unique<Lock>(client, name_on(node, "renewed-" + std::to_string(i) + "-")));
            locks.back()->lock();
        }
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // past two timeouts
    for (auto& lock : locks) {
        EXPECT_GT(on(owner(lock->name()), {"PTTL", lock->name()}), 0) << lock->name();
        lock->unlock();
    }
}

TEST_F(ClusterTest, CliRunsOnACluster) {
    const fs::path dir = make_test_dir();
    const std::string url = "redis-cluster://127.0.0.1:" + std::to_string(cluster->port(1));
    const std::string name = name_on(2, "cli-");
    Cli cli({"run", "--url", url, name, "--", "true"}, dir, {});
    const Finished done = cli.wait();
    EXPECT_EQ(done.status, 0) << done.err;
    EXPECT_EQ(on(2, {"EXISTS", name}), 0);
    fs::remove_all(dir);
}

// Names whose braces would scatter a primitive's keys and channel over
// slots. Every primitive either works with the name (a channel outside its
// key's slot goes by classic pub/sub, which any slot's script may publish to)
// or refuses it before anything is sent, saying why and what to write instead.
TEST_F(ClusterTest, EveryNameWorksOrIsRefusedBeforeAnythingIsWritten) {
    const std::vector<std::string> names{"{}", "job-{}", "a{b", "a}b", "x}{y", "{tenant-7}:orders", "plain"};
    for (const ShardedSubscription mode : {ShardedSubscription::on, ShardedSubscription::off}) {
        Config c = config();
        c.sharded_subscription = mode;
        Client holder(c), waiter_client(c);
        for (const std::string& name : names) {
            SCOPED_TRACE((mode == ShardedSubscription::on ? "sharded, " : "classic, ") + name);
            const auto forget = [&](const std::string& key) {
                support::SyncRedis(cluster->port(owner(key))).command({"DEL", key});
            };
            const bool plain = name == "plain" || name == "{tenant-7}:orders";  // must work everywhere
            // Made and used, or refused when made, before anything is sent.
            const auto works_or_refused = [&](const std::function<void()>& use) {
                try {
                    use();
                } catch (const std::invalid_argument& e) {
                    EXPECT_FALSE(plain) << e.what();
                    EXPECT_NE(std::string(e.what()).find("different slots"), std::string::npos) << e.what();
                }
            };
            // Held, a waiter on the other client woken by the release.
            const auto handoff = [&](Lock& held, Lock& wanted) {
                held.lock(std::chrono::seconds(60));
                const std::string owner = waiter_client.new_owner();
                auto waiting = wanted.async_try_lock(owner, std::chrono::seconds(30));
                ASSERT_EQ(waiting.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
                held.release();
                ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready)
                    << wanted.name() << ": the unlock did not wake the waiter";
                EXPECT_TRUE(waiting.get());
                wanted.async_release(owner).get();
            };
            works_or_refused([&] {
                Lock held(holder, name), wanted(waiter_client, name);
                handoff(held, wanted);
            });
            works_or_refused([&] {
                FairLock held(holder, name), wanted(waiter_client, name);
                handoff(held, wanted);
            });
            works_or_refused([&] {
                FencedLock held(holder, name), wanted(waiter_client, name);
                handoff(held, wanted);
            });
            works_or_refused([&] {
                ReadWriteLock held(holder, name), wanted(waiter_client, name);
                handoff(held.write_lock(), wanted.read_lock());
            });
            works_or_refused([&] {
                Semaphore slots(holder, name), wanted(waiter_client, name);
                ASSERT_TRUE(slots.try_set_permits(0));
                auto acquiring = wanted.async_try_acquire(1, std::chrono::seconds(30));
                ASSERT_EQ(acquiring.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
                slots.release();
                ASSERT_EQ(acquiring.wait_for(std::chrono::seconds(10)), std::future_status::ready);
                EXPECT_TRUE(acquiring.get());
                forget(name);  // a semaphore's count stays: not this test's business
            });
            works_or_refused([&] {
                PermitExpirableSemaphore pool(holder, name + ":pool"), wanted(waiter_client, name + ":pool");
                ASSERT_TRUE(pool.try_set_permits(1));
                const std::string id = pool.acquire();
                auto acquiring = wanted.async_try_acquire(std::chrono::seconds(30), std::chrono::seconds(30));
                ASSERT_EQ(acquiring.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
                pool.release(id);
                ASSERT_EQ(acquiring.wait_for(std::chrono::seconds(10)), std::future_status::ready);
                const auto taken = acquiring.get();
                ASSERT_TRUE(taken);
                wanted.release(*taken);
                EXPECT_EQ(pool.available_permits(), 1);
                forget(name + ":pool");
            });
            works_or_refused([&] {
                CountDownLatch gate(holder, name), awaited(waiter_client, name);
                ASSERT_TRUE(gate.try_set_count(1));
                auto opening = awaited.async_await_for(std::chrono::seconds(30));
                ASSERT_EQ(opening.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
                gate.count_down();
                ASSERT_EQ(opening.wait_for(std::chrono::seconds(10)), std::future_status::ready);
                EXPECT_TRUE(opening.get());
            });
        }
        // Every key was given back or deleted (but the fenced locks' token
        // counters, which never expire): nothing was left half-written.
        for (std::size_t i = 0; i < cluster->size(); ++i) {
            auto keys = support::SyncRedis(cluster->port(i)).command({"KEYS", "*"});
            for (std::size_t k = 0; k < keys->elements; ++k) {
                const std::string key(keys->element[k]->str, keys->element[k]->len);
                EXPECT_TRUE(key.starts_with("redisson_lock_token:")) << "left on node " << i << ": " << key;
            }
            support::SyncRedis(cluster->port(i)).command({"FLUSHALL"});
        }
    }
}

}  // namespace
}  // namespace holdfast::testing
