// The SET NX PX lock: its raw layout, no reentrancy, the watchdog, and the
// keys of go-redsync / node-redlock / redis-plus-plus, written here by a raw
// client exactly as those libraries write them.
#include <future>
#include <system_error>
#include <thread>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

// go-redsync's delete and extend scripts (redis-plus-plus and node-redlock use the same compare-and-*).
const std::string foreign_delete =
    "if redis.call(\"GET\", KEYS[1]) == ARGV[1] then return redis.call(\"DEL\", KEYS[1]) else return 0 end";
const std::string foreign_extend =
    "if redis.call(\"GET\", KEYS[1]) == ARGV[1] then return redis.call(\"PEXPIRE\", KEYS[1], ARGV[2]) "
    "else return 0 end";
// A redsync token: 16 random bytes, base64.
const std::string foreign_token = "q3Jz0Fh1mXkP8sWb2vYc4A==";

class SimpleLocks : public RedisTest {
protected:
    Config short_watchdog() const {
        Config c = config();
        c.lock_watchdog_timeout = std::chrono::milliseconds(1500);
        return c;
    }
    bool foreign_lock(const std::string& name) {
        return raw->string({"SET", name, foreign_token, "NX", "PX", "30000"}) == "OK";
    }
};

TEST_F(SimpleLocks, KeyIsAPlainStringHoldingTheOwnersToken) {
    Client client(config());
    SimpleLock lock(client, "report");
    raw->command({"CONFIG", "RESETSTAT"});
    lock.lock();
    EXPECT_EQ(raw->string({"TYPE", "report"}), "string");
    EXPECT_EQ(raw->string({"GET", "report"}), client.current_owner());
    const long long pttl = raw->integer({"PTTL", "report"});
    EXPECT_GT(pttl, 25000);  // the 30 s watchdog lease
    EXPECT_LE(pttl, 30000);
    EXPECT_EQ(raw->integer({"DBSIZE"}), 1);
    EXPECT_TRUE(lock.is_locked());
    EXPECT_EQ(lock.hold_count(), 1);
    ASSERT_EQ(lock.holders().size(), 1u);
    EXPECT_EQ(lock.holders()[0].owner, client.current_owner());
    lock.unlock();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
    EXPECT_EQ(calls("publish"), 0);  // its peers listen to nothing
    EXPECT_FALSE(lock.is_locked());
    EXPECT_EQ(lock.remaining_ttl(), std::nullopt);
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
}

TEST_F(SimpleLocks, NotReentrant) {
    Client client(config());
    SimpleLock lock(client, "once");
    lock.lock();
    EXPECT_FALSE(lock.try_lock());
    for (auto attempt : std::vector<std::function<void()>>{[&] { lock.lock(); },
                                                           [&] { lock.try_lock_for(std::chrono::seconds(5)); }}) {
        try {
            attempt();
            FAIL() << "a holder acquired its simple lock again";
        } catch (const DeadlockError& e) {
            EXPECT_EQ(e.code(), std::errc::resource_deadlock_would_occur);
            EXPECT_NE(std::string(e.what()).find("'once'"), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(lock.hold_count(), 1);  // still held once, still renewed
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 1u);
    lock.unlock();
    EXPECT_THROW(lock.release(), NotOwnerError);
    EXPECT_EQ(raw->integer({"EXISTS", "once"}), 0);
}

TEST_F(SimpleLocks, OtherOwnersAreExcludedAndWaitersGetInAfterTheRelease) {
    Client client(config()), other(config());
    SimpleLock mine(client, "door"), theirs(other, "door");
    mine.lock();
    EXPECT_FALSE(theirs.try_lock());
    EXPECT_FALSE(std::async(std::launch::async, [&] { return mine.try_lock(); }).get());  // another thread
    EXPECT_THROW(theirs.release(), NotOwnerError);
    auto waiter = std::async(std::launch::async, [&] {
        if (!theirs.try_lock_for(std::chrono::seconds(20))) return false;
        theirs.unlock();
        return true;
    });
    mine.unlock();
    EXPECT_TRUE(waiter.get());
    EXPECT_EQ(raw->integer({"EXISTS", "door"}), 0);
    EXPECT_EQ(detail::core_of(client).transport.subscriber().channel_count(), 0u);
    EXPECT_EQ(detail::core_of(other).transport.subscriber().channel_count(), 0u);
}

TEST_F(SimpleLocks, AForeignLibrarysKeyExcludesHoldfastAndIsNeverDeleted) {
    Client client(config());
    SimpleLock lock(client, "shared");
    ASSERT_TRUE(foreign_lock("shared"));
    EXPECT_FALSE(lock.try_lock());
    EXPECT_FALSE(lock.try_lock_for(std::chrono::milliseconds(300)));
    EXPECT_TRUE(lock.is_locked());
    EXPECT_EQ(lock.hold_count(), 0);
    ASSERT_EQ(lock.holders().size(), 1u);
    EXPECT_EQ(lock.holders()[0].owner, foreign_token);
    EXPECT_THROW(lock.release(), NotOwnerError);
    EXPECT_EQ(raw->string({"GET", "shared"}), foreign_token);
    EXPECT_GT(raw->integer({"PTTL", "shared"}), 25000);  // not touched

    // A waiter gets in once the foreign holder deletes its key (nothing is published: it polls).
    auto waiter = std::async(std::launch::async, [&] {
        if (!lock.try_lock_for(std::chrono::seconds(20))) return false;
        const bool ours = support::SyncRedis(server->port()).string({"GET", "shared"}) == client.current_owner();
        lock.unlock();
        return ours;
    });
    EXPECT_EQ(raw->integer({"EVAL", foreign_delete, "1", "shared", foreign_token}), 1);
    EXPECT_TRUE(waiter.get());
    EXPECT_EQ(raw->integer({"EXISTS", "shared"}), 0);
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
}

TEST_F(SimpleLocks, AForeignLibraryCannotTakeDeleteOrExtendAHoldfastLock) {
    Client client(config());
    SimpleLock lock(client, "shared");
    lock.lock(std::chrono::seconds(20));
    EXPECT_FALSE(foreign_lock("shared"));
    EXPECT_EQ(raw->integer({"EVAL", foreign_delete, "1", "shared", foreign_token}), 0);
    EXPECT_EQ(raw->integer({"EVAL", foreign_extend, "1", "shared", foreign_token, "60000"}), 0);
    EXPECT_LE(raw->integer({"PTTL", "shared"}), 20000);
    EXPECT_EQ(raw->string({"GET", "shared"}), client.current_owner());
    // ... and a foreign client that knows the token (holdfast's owner id) extends it as its own.
    EXPECT_EQ(raw->integer({"EVAL", foreign_extend, "1", "shared", client.current_owner(), "60000"}), 1);
    lock.unlock();
    EXPECT_TRUE(foreign_lock("shared"));
}

TEST_F(SimpleLocks, WatchdogRenewsByCompareAndPexpire) {
    Client client(short_watchdog());
    SimpleLock lock(client, "kept");
    lock.lock();
    const long long renewals_before = calls("pexpire");
    // Held past three leases: renewed, never expired.
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(4600)) {
        ASSERT_GT(raw->integer({"PTTL", "kept"}), 0) << "expired while held";
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_GE(calls("pexpire") - renewals_before, 3);
    EXPECT_EQ(raw->string({"GET", "kept"}), client.current_owner());
    lock.unlock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
}

TEST_F(SimpleLocks, ATakenOverKeyIsReportedLost) {
    Client client(short_watchdog());
    SimpleLock lock(client, "contested");
    lock.lock();
    std::stop_token lost = lock.lease_lost_token();
    ASSERT_TRUE(lost.stop_possible());
    raw->command({"SET", "contested", foreign_token, "PX", "30000"});  // its holder's lease ran out; redsync took it
    EXPECT_TRUE(eventually([&] { return lost.stop_requested(); }));
    EXPECT_THROW(lock.release(), NotOwnerError);
    EXPECT_EQ(raw->string({"GET", "contested"}), foreign_token);
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
}

TEST_F(SimpleLocks, ExplicitLeaseExpiresAndAPollingWaiterGetsIn) {
    Client client(config()), other(config());
    SimpleLock held(client, "brief"), wanted(other, "brief");
    held.lock(std::chrono::milliseconds(400));
    // Not renewed, but watched: its holder is told before anyone else gets in.
    const std::stop_token lost = held.lease_lost_token();
    ASSERT_TRUE(lost.stop_possible());
    EXPECT_TRUE(wanted.try_lock_for(std::chrono::seconds(20)));
    EXPECT_TRUE(lost.stop_requested());
    EXPECT_THROW(held.release(), NotOwnerError);
    wanted.unlock();
}

TEST_F(SimpleLocks, MutualExclusionUnderContention) {
    Client a(config()), b(config());
    SimpleLock on_a(a, "counter"), on_b(b, "counter");
    // Atomics, so only the Redis lock orders them: a load-then-store loses
    // updates, and `inside` counts overlaps, the moment two threads get in together.
    std::atomic<int> counter{0}, inside{0}, overlaps{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < 4; ++t)
        workers.emplace_back([&, t] {
            SimpleLock& lock = t % 2 ? on_a : on_b;
            for (int i = 0; i < 25; ++i) {
                std::lock_guard guard(lock);
                if (inside.fetch_add(1) != 0) ++overlaps;
                const int seen = counter.load();
                std::this_thread::yield();
                counter.store(seen + 1);
                inside.fetch_sub(1);
            }
        });
    for (auto& w : workers) w.join();
    EXPECT_EQ(overlaps, 0);
    EXPECT_EQ(counter, 100);
    EXPECT_EQ(raw->integer({"EXISTS", "counter"}), 0);
}

TEST_F(SimpleLocks, ForceUnlockDeletesAnyHoldersKeyButNoOtherType) {
    Client client(config());
    SimpleLock lock(client, "stuck");
    EXPECT_FALSE(lock.force_unlock());
    ASSERT_TRUE(foreign_lock("stuck"));
    EXPECT_TRUE(lock.force_unlock());
    EXPECT_EQ(raw->integer({"EXISTS", "stuck"}), 0);
    raw->command({"HSET", "stuck", "field", "1"});
    EXPECT_THROW(lock.force_unlock(), WrongTypeError);
    EXPECT_EQ(raw->string({"HGET", "stuck", "field"}), "1");
}

TEST_F(SimpleLocks, WrongTypeKeyIsNamedAndLeftAlone) {
    Client client(config());
    raw->command({"HSET", "profile", "name", "ada"});
    SimpleLock lock(client, "profile");
    try {
        lock.try_lock_for(std::chrono::milliseconds(200));
        FAIL() << "locked a hash key";
    } catch (const WrongTypeError& e) {
        EXPECT_NE(std::string(e.what()).find("'profile'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("hash"), std::string::npos) << e.what();
    }
    EXPECT_THROW(lock.release(), WrongTypeError);
    EXPECT_THROW(lock.is_locked(), WrongTypeError);
    EXPECT_THROW(lock.holders(), WrongTypeError);
    EXPECT_EQ(raw->string({"HGET", "profile", "name"}), "ada");
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
}

TEST_F(SimpleLocks, BadArgumentsAreRejected) {
    Client client(config());
    EXPECT_THROW(SimpleLock(client, ""), std::invalid_argument);
    SimpleLock lock(client, "args");
    EXPECT_THROW(lock.lock(std::chrono::milliseconds(0)), std::invalid_argument);
    EXPECT_THROW(lock.try_lock_for(std::chrono::milliseconds(-1)), std::invalid_argument);
    EXPECT_EQ(raw->integer({"EXISTS", "args"}), 0);
}

}  // namespace
}  // namespace holdfast::testing
