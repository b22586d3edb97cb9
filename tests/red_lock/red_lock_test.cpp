// RedLock over five local redis-server processes: a quorum of three, servers
// killed before and after acquisition, validity, renewal, nothing left behind.
#include <atomic>
#include <future>
#include <system_error>
#include <thread>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"
#include "tcp_proxy.hpp"

namespace holdfast::testing {
namespace {

constexpr int servers_count = 5;

class RedLocks : public ::testing::Test {
protected:
    void SetUp() override {
        for (int i = 0; i < servers_count; ++i) {
            servers.push_back(std::make_unique<support::RedisServer>());
            raws.push_back(std::make_unique<support::SyncRedis>(servers.back()->port()));
            clients.push_back(std::make_unique<Client>(config(i)));
            locks.push_back(std::make_unique<Lock>(*clients.back(), "fleet"));
        }
    }

    Config config(int i) const {
        Config c;
        c.port = servers[i]->port();
        c.timeout = std::chrono::milliseconds(1000);
        c.lock_watchdog_timeout = std::chrono::milliseconds(1500);  // renewed every 500 ms
        return c;
    }

    std::vector<std::reference_wrapper<Lock>> members() const {
        std::vector<std::reference_wrapper<Lock>> result;
        for (const auto& lock : locks) result.emplace_back(*lock);
        return result;
    }

    /// Servers (of those alive) where `key` exists.
    int holding(const std::string& key = "fleet", int alive = servers_count) const {
        int n = 0;
        for (int i = 0; i < alive; ++i) n += static_cast<int>(raws[i]->integer({"EXISTS", key}));
        return n;
    }

    void kill(int i) { servers[i]->kill(); }

    std::string server_name(int i) const { return "127.0.0.1:" + std::to_string(servers[i]->port()); }

    // No client renews or listens to anything: the RedLock renews its own
    // holds, and waits by backing off.
    void expect_clients_clean() const {
        for (const auto& client : clients) {
            EXPECT_EQ(detail::core_of(*client).watchdog.tracked(), 0u);
            EXPECT_EQ(detail::core_of(*client).transport.subscriber().channel_count(), 0u);
        }
    }

    std::vector<std::unique_ptr<support::RedisServer>> servers;
    std::vector<std::unique_ptr<support::SyncRedis>> raws;
    std::vector<std::unique_ptr<Client>> clients;
    std::vector<std::unique_ptr<Lock>> locks;
};

TEST_F(RedLocks, AllServersUp) {
    RedLock red(members());
    EXPECT_EQ(red.quorum(), 3u);
    EXPECT_EQ(red.validity(), std::nullopt);
    ASSERT_TRUE(red.try_lock());
    // Granted by a quorum; the last attempts may still be on their way.
    for (int i = 0; i < servers_count; ++i)
        EXPECT_TRUE(eventually([&] { return raws[i]->string({"HGET", "fleet", clients[i]->current_owner()}) == "1"; }))
            << server_name(i);
    const auto validity = red.validity();
    ASSERT_TRUE(validity);
    EXPECT_LE(*validity, std::chrono::milliseconds(1500 - 17));  // lease - drift (1 % + 2 ms)
    EXPECT_GT(*validity, std::chrono::milliseconds(1000));
    EXPECT_TRUE(red.lease_lost_token().stop_possible());
    expect_clients_clean();
    red.unlock();  // returns once a quorum released; the others follow
    EXPECT_TRUE(eventually([&] { return holding() == 0; }));
    EXPECT_EQ(red.validity(), std::nullopt);
    EXPECT_THROW(red.release(), NotOwnerError);
}

// A stopped server does not hold the others up: every attempt is sent at once
// and the lock is granted as soon as a quorum is, long before the stopped
// server's 30 s command timeout.
TEST_F(RedLocks, AttemptsGoOutInParallelAndAQuorumIsEnough) {
    Config patient = config(0);
    patient.timeout = std::chrono::seconds(30);
    Client patient_client(patient);
    Lock on_stopped(patient_client, "fleet");
    RedLock red(on_stopped, *locks[1], *locks[2], *locks[3], *locks[4]);
    const std::string owner = clients[1]->new_owner();
    servers[0]->pause();
    auto taken = red.async_try_lock(owner, std::chrono::milliseconds(0), std::chrono::seconds(20));
    const bool ready = taken.wait_for(std::chrono::seconds(15)) == std::future_status::ready;
    const bool granted = ready && taken.get();
    auto released = red.async_release(owner);
    const bool unlocked = released.wait_for(std::chrono::seconds(15)) == std::future_status::ready;
    servers[0]->resume();
    EXPECT_TRUE(granted);
    EXPECT_TRUE(unlocked);
    // The stopped server's attempt and release run in that order once it resumes.
    EXPECT_TRUE(eventually([&] { return holding() == 0; }));
}

// is_held_by(): a quorum of servers that say so, whatever the others say; an
// error only when the answers that came cannot decide.
TEST_F(RedLocks, IsHeldByAQuorumOfServers) {
    RedLock red(members());
    const std::string owner = clients[0]->new_owner();
    EXPECT_FALSE(red.is_held_by_current_thread());
    ASSERT_TRUE(red.async_try_lock(owner, std::chrono::milliseconds(0), std::chrono::seconds(60)).get());
    ASSERT_TRUE(eventually([&] { return holding() == servers_count; }));
    EXPECT_TRUE(red.is_held_by(owner));
    EXPECT_FALSE(red.is_held_by_current_thread());
    kill(3);
    kill(4);
    EXPECT_TRUE(red.async_is_held_by(owner).get()) << "three of five say so";
    raws[0]->command({"DEL", "fleet"});
    EXPECT_THROW(red.is_held_by(owner), ConnectionError) << "two say so, one not: the dead two decide";
    raws[1]->command({"DEL", "fleet"});
    raws[2]->command({"DEL", "fleet"});
    EXPECT_FALSE(red.is_held_by(owner)) << "three say not: no quorum is possible";
}

TEST_F(RedLocks, TwoServersDownStillLocksRenewsAndUnlocks) {
    RedLock red(members());
    kill(3);
    kill(4);
    red.lock();
    EXPECT_EQ(holding("fleet", 3), 3);
    std::stop_token lost = red.lease_lost_token();
    // Three leases long, renewed on the three live servers and never lost.
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(4600)) {
        for (int i = 0; i < 3; ++i) ASSERT_GT(raws[i]->integer({"PTTL", "fleet"}), 0) << server_name(i);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_FALSE(lost.stop_requested());
    EXPECT_TRUE(red.validity());
    red.unlock();
    EXPECT_EQ(holding("fleet", 3), 0);
    expect_clients_clean();
}

TEST_F(RedLocks, ThreeServersDownFailsNamingThem) {
    RedLock red(members());
    kill(2);
    kill(3);
    kill(4);
    for (auto attempt : std::vector<std::function<void()>>{[&] { red.try_lock(); }, [&] { red.lock(); }}) {
        try {
            attempt();
            FAIL() << "locked with two servers of five";
        } catch (const ConnectionError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("a quorum needs 3 of 5 servers, and 3 failed"), std::string::npos) << what;
            for (int i = 2; i < 5; ++i) EXPECT_NE(what.find(server_name(i)), std::string::npos) << what;
            EXPECT_EQ(what.find(server_name(0)), std::string::npos) << what;
        }
        // The two servers that granted it have it back.
        EXPECT_TRUE(eventually([&] { return holding("fleet", 2) == 0; }));
    }
    expect_clients_clean();
}

TEST_F(RedLocks, RenewalBelowQuorumReportsTheLockLost) {
    RedLock red(members());
    red.lock();
    std::stop_token lost = red.lease_lost_token();
    std::atomic<bool> told{false};
    std::stop_callback on_lost(lost, [&] { told = true; });
    kill(2);
    kill(3);
    kill(4);
    EXPECT_TRUE(eventually([&] { return told.load(); }));
    EXPECT_EQ(red.validity(), std::nullopt);
    try {
        red.release();
        FAIL() << "unlocked a lost RedLock without a word";
    } catch (const NotOwnerError& e) {
        EXPECT_NE(std::string(e.what()).find("lost"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(eventually([&] { return holding("fleet", 2) == 0; }));  // what was left is released
}

TEST_F(RedLocks, KeysGoneOnAMajorityIsLostToo) {
    RedLock red(members());
    red.lock();
    std::stop_token lost = red.lease_lost_token();
    ASSERT_TRUE(eventually([&] { return holding() == 5; }));  // no attempt still on its way
    for (int i = 0; i < 3; ++i) raws[i]->command({"DEL", "fleet"});  // e.g. restarted without persistence
    EXPECT_TRUE(eventually([&] { return lost.stop_requested(); }));
    EXPECT_THROW(red.release(), NotOwnerError);
    // unlock() answers once the outcome is decided (three refusals): the two
    // holds left are given back, but maybe just after.
    EXPECT_TRUE(eventually([&] { return holding() == 0; }));
}

TEST_F(RedLocks, NoValidityLeftMeansNotAcquired) {
    RedLock red(members());
    // A lease no longer than its drift (1 % + 2 ms) is spent before it is granted.
    EXPECT_FALSE(red.try_lock_for(std::chrono::milliseconds(0), std::chrono::milliseconds(2)));
    EXPECT_FALSE(red.try_lock_for(std::chrono::milliseconds(0), std::chrono::milliseconds(1)));
    EXPECT_TRUE(eventually([&] { return holding() == 0; }));
    EXPECT_EQ(red.validity(), std::nullopt);
    ASSERT_TRUE(red.try_lock_for(std::chrono::milliseconds(0), std::chrono::seconds(10)));
    EXPECT_GT(*red.validity(), std::chrono::milliseconds(9000));
    red.unlock();
}

TEST_F(RedLocks, AMinorityHeldElsewhereIsOutvoted) {
    const std::string java_owner = "6c1d6f7e-5e2b-4b7a-9d55-0b8f1a2c3d4e:87";
    for (int i = 3; i < 5; ++i) raws[i]->command({"HSET", "fleet", java_owner, "1"});
    RedLock red(members());
    ASSERT_TRUE(red.try_lock());
    EXPECT_EQ(holding("fleet", 3), 3);
    red.unlock();  // the two servers that never granted it say so; a quorum released
    EXPECT_EQ(holding("fleet", 3), 0);
    for (int i = 3; i < 5; ++i) EXPECT_EQ(raws[i]->string({"HGET", "fleet", java_owner}), "1");

    for (int i = 2; i < 5; ++i) raws[i]->command({"HSET", "fleet", java_owner, "1"});  // now a majority
    EXPECT_FALSE(red.try_lock());
    EXPECT_FALSE(red.try_lock_for(std::chrono::milliseconds(200)));
    EXPECT_TRUE(eventually([&] { return holding("fleet", 2) == 0; }));  // the two it took are given back
    for (int i = 2; i < 5; ++i) raws[i]->command({"DEL", "fleet"});
    EXPECT_TRUE(red.try_lock_for(std::chrono::seconds(10)));
    red.unlock();
}

TEST_F(RedLocks, WaitsForTheHolderAndExcludesIt) {
    std::vector<std::unique_ptr<Client>> other_clients;
    std::vector<std::unique_ptr<Lock>> other_locks;
    std::vector<std::reference_wrapper<Lock>> others;
    for (int i = 0; i < servers_count; ++i) {
        other_clients.push_back(std::make_unique<Client>(config(i)));
        other_locks.push_back(std::make_unique<Lock>(*other_clients.back(), "fleet"));
        others.emplace_back(*other_locks.back());
    }
    RedLock mine(members()), theirs(others);
    std::atomic<int> inside{0}, overlaps{0};
    auto worker = [&](RedLock& red) {
        return std::async(std::launch::async, [&] {
            for (int i = 0; i < 15; ++i) {
                std::lock_guard guard(red);
                if (inside.fetch_add(1) != 0) ++overlaps;
                std::this_thread::yield();
                inside.fetch_sub(1);
            }
        });
    };
    auto a = worker(mine), b = worker(theirs);
    ASSERT_EQ(a.wait_for(std::chrono::seconds(60)), std::future_status::ready);
    ASSERT_EQ(b.wait_for(std::chrono::seconds(60)), std::future_status::ready);
    a.get();
    b.get();
    EXPECT_EQ(overlaps, 0);
    EXPECT_TRUE(eventually([&] { return holding() == 0; }));
    expect_clients_clean();
}

// Not renewed; its holder is told when the validity runs out, as a Lock's
// explicit lease tells it.
TEST_F(RedLocks, ExplicitLeaseIsNotRenewed) {
    RedLock red(members());
    red.lock(std::chrono::milliseconds(800));
    const std::stop_token lost = red.lease_lost_token();
    EXPECT_LE(*red.validity(), std::chrono::milliseconds(800 - 10));
    EXPECT_TRUE(eventually([&] { return holding() == 0; }));
    EXPECT_TRUE(lost.stop_requested());
    EXPECT_EQ(red.validity(), std::nullopt);
    try {
        red.release();
        FAIL() << "unlocked an expired RedLock";
    } catch (const NotOwnerError& e) {
        EXPECT_NE(std::string(e.what()).find("validity ran out"), std::string::npos) << e.what();
    }
}

// With SimpleLocks it is go-redsync's / node-redlock's multi-server lock, on their keys.
TEST_F(RedLocks, OfSimpleLocksSharesTheirKeys) {
    std::vector<std::unique_ptr<SimpleLock>> simple;
    std::vector<std::reference_wrapper<Lock>> refs;
    for (int i = 0; i < servers_count; ++i) {
        simple.push_back(std::make_unique<SimpleLock>(*clients[i], "jobs"));
        refs.emplace_back(*simple.back());
    }
    RedLock red(refs);
    const std::string owner = clients[0]->new_owner();
    ASSERT_TRUE(red.async_try_lock(owner).get());
    for (int i = 0; i < servers_count; ++i)
        EXPECT_TRUE(eventually([&] { return raws[i]->string({"GET", "jobs"}) == owner; }));
    // Not reentrant, like its members: a second try is refused, a wait refused at once.
    EXPECT_FALSE(red.async_try_lock(owner).get());
    try {
        red.async_lock(owner).get();
        FAIL() << "a holder took its RedLock of SimpleLocks again";
    } catch (const DeadlockError& e) {
        EXPECT_EQ(e.code(), std::errc::resource_deadlock_would_occur);
    }
    red.async_release(owner).get();
    EXPECT_TRUE(eventually([&] { return holding("jobs") == 0; }));

    for (int i = 0; i < 3; ++i) raws[i]->command({"SET", "jobs", "q3Jz0Fh1mXkP8sWb2vYc4A==", "NX", "PX", "30000"});
    EXPECT_FALSE(red.async_try_lock(owner).get());
    EXPECT_TRUE(eventually([&] { return raws[3]->integer({"EXISTS", "jobs"}) + raws[4]->integer({"EXISTS", "jobs"}) == 0; }));
    expect_clients_clean();
}

TEST_F(RedLocks, BadArgumentsAreNamed) {
    expect_invalid_argument([] { RedLock(std::vector<std::reference_wrapper<Lock>>{}); }, "empty");
    Lock other_name(*clients[1], "elsewhere");
    expect_invalid_argument([&] { RedLock(*locks[0], *locks[1], other_name); }, "independent servers");
    expect_invalid_argument([&] { RedLock(*locks[0], *locks[0]); }, "locks[0] and locks[1]");
    RedLock red(members());
    expect_invalid_argument([&] { red.lock(std::chrono::milliseconds(0)); }, "lease");
    expect_invalid_argument([&] { red.lock(std::chrono::years(101)); }, "too long");
    expect_invalid_argument([&] { red.try_lock_for(std::chrono::milliseconds(-1)); }, "wait");
    expect_invalid_argument([&] { red.validity(""); }, "owner");
    EXPECT_EQ(holding(), 0);
    ASSERT_TRUE(red.try_lock_for(std::chrono::hours::max()));  // no deadline, no overflow
    red.unlock();
}

// A holder cut off from a majority is told of the loss when its validity
// ends, before another client can take a quorum: not when its renewal round,
// waiting out Config::timeout (here above 2/3 of the lease), gives up.
TEST(RedLockValidity, AHolderCutOffIsToldBeforeAnotherTakesAQuorum) {
    std::vector<std::unique_ptr<support::RedisServer>> servers;
    std::vector<std::unique_ptr<support::TcpProxy>> proxies;
    std::vector<std::unique_ptr<Client>> clients;
    std::vector<std::unique_ptr<Lock>> held_locks, wanted_locks;
    for (int i = 0; i < 3; ++i) {
        servers.push_back(std::make_unique<support::RedisServer>());
        proxies.push_back(std::make_unique<support::TcpProxy>(servers.back()->port()));
        Config through_proxy, direct;
        through_proxy.port = proxies.back()->port();
        direct.port = servers.back()->port();
        through_proxy.lock_watchdog_timeout = direct.lock_watchdog_timeout = std::chrono::seconds(5);
        through_proxy.timeout = std::chrono::seconds(4);
        clients.push_back(std::make_unique<Client>(through_proxy));
        held_locks.push_back(std::make_unique<Lock>(*clients.back(), "fleet"));
        clients.push_back(std::make_unique<Client>(direct));
        wanted_locks.push_back(std::make_unique<Lock>(*clients.back(), "fleet"));
    }
    RedLock held(*held_locks[0], *held_locks[1], *held_locks[2]);
    RedLock wanted(*wanted_locks[0], *wanted_locks[1], *wanted_locks[2]);
    held.lock();
    std::atomic<bool> told{false};
    std::stop_callback on_lost(held.lease_lost_token(), [&] { told = true; });
    proxies[0]->freeze();
    proxies[1]->freeze();
    ASSERT_TRUE(wanted.try_lock_for(std::chrono::seconds(30)));
    EXPECT_TRUE(told.load()) << "another client took a quorum before the cut-off holder was told";
    EXPECT_EQ(held.validity(), std::nullopt);
    wanted.unlock();
    proxies[0]->heal();
    proxies[1]->heal();
}

}  // namespace
}  // namespace holdfast::testing
