// Leases: explicit leases expire, the watchdog keeps unleased holds alive,
// a dead holder's lock frees itself, and a lost hold is signalled.
#include <thread>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

class Leases : public RedisTest {
protected:
    Config short_watchdog() const {
        Config c = config();
        c.lock_watchdog_timeout = std::chrono::milliseconds(1500);
        return c;
    }
};

TEST_F(Leases, ExplicitLeaseExpiresAndIsNotRenewed) {
    Client client(short_watchdog());
    Lock lock(client, "brief");
    lock.lock(std::chrono::milliseconds(600));
    EXPECT_FALSE(detail::core_of(client).watchdog.renews("brief", client.current_owner()));  // watched, not renewed
    EXPECT_TRUE(eventually([&] { return raw->integer({"EXISTS", "brief"}) == 0; }));
    EXPECT_THROW(lock.release(), NotOwnerError);
}

TEST_F(Leases, WatchdogKeepsTheLockPastThreeTimesItsTimeout) {
    Client client(short_watchdog());
    Lock lock(client, "kept");
    lock.lock();
    const auto start = std::chrono::steady_clock::now();
    long long lowest = 1500;
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(4800)) {
        lowest = std::min(lowest, raw->integer({"PTTL", "kept"}));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_GT(lowest, 0) << "the lock expired while held";
    EXPECT_TRUE(lock.is_held_by_current_thread());
    lock.unlock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
}

TEST_F(Leases, RenewalsAreBatched) {
    Config c = short_watchdog();
    c.connection_pool_size = 1;
    c.lock_watchdog_batch_size = 100;
    Client client(c);
    std::vector<std::unique_ptr<Lock>> locks;
    for (int i = 0; i < 250; ++i) {
        locks.push_back(std::make_unique<Lock>(client, "batch:" + std::to_string(i)));
        locks.back()->lock();
    }
    raw->command({"CONFIG", "RESETSTAT"});
    // About two ticks (every 500 ms). Unbatched, that is ~500 script calls; batched, 3 a tick.
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    const long long renewals = script_calls();
    EXPECT_GE(renewals, 3);
    EXPECT_LE(renewals, 12);
    for (int i = 0; i < 250; i += 50) EXPECT_GT(raw->integer({"PTTL", "batch:" + std::to_string(i)}), 0);
    for (auto& l : locks) l->unlock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
}

TEST_F(Leases, KilledHolderFreesTheLockAfterItsLease) {
    Config c = config();
    c.lock_watchdog_timeout = std::chrono::milliseconds(1500);
    ASSERT_EQ(in_killed_process(c, [](Client& client) {
                  Lock(client, "crashy").lock();
                  return std::string("locked");
              }),
              "locked");
    EXPECT_EQ(raw->integer({"EXISTS", "crashy"}), 1);

    Client client(config());
    Lock lock(client, "crashy");
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(lock.try_lock_for(std::chrono::seconds(10)));
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500 + 2000));
    lock.unlock();
}

TEST_F(Leases, StopTokenFiresWhenTheKeyIsDeletedBehindTheHolder) {
    Client client(short_watchdog());
    Lock lock(client, "fragile");
    EXPECT_FALSE(lock.lease_lost_token().stop_possible());
    lock.lock();
    auto token = lock.lease_lost_token();
    ASSERT_TRUE(token.stop_possible());
    std::atomic<bool> called{false};
    std::stop_callback callback(token, [&] { called = true; });
    EXPECT_FALSE(token.stop_requested());
    raw->command({"DEL", "fragile"});
    EXPECT_TRUE(eventually([&] { return token.stop_requested(); }, std::chrono::seconds(5)));
    // request_stop() marks the token before it runs the callbacks.
    EXPECT_TRUE(eventually([&] { return called.load(); }));
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
    EXPECT_THROW(lock.release(), NotOwnerError);
}

TEST_F(Leases, StopTokenFiresOnForceUnlockButNotOnOwnUnlock) {
    Client client(short_watchdog()), admin(config());
    Lock lock(client, "watched");
    lock.lock();
    auto first = lock.lease_lost_token();
    lock.unlock();
    lock.lock();
    auto second = lock.lease_lost_token();
    Lock(admin, "watched").force_unlock();
    EXPECT_TRUE(eventually([&] { return second.stop_requested(); }, std::chrono::seconds(5)));
    EXPECT_FALSE(first.stop_requested());
}

TEST_F(Leases, PartialUnlockKeepsAnExplicitLeasesDeadline) {
    Client client(config());
    Lock lock(client, "timed");
    lock.lock(std::chrono::seconds(5));
    lock.lock(std::chrono::seconds(5));
    lock.unlock();
    const long long pttl = raw->integer({"PTTL", "timed"});
    EXPECT_GT(pttl, 0);
    EXPECT_LE(pttl, 5000);  // not reset to the 30 s watchdog lease
    lock.unlock();
}

TEST_F(Leases, MixedLeasesKeepRenewingUntilTheLastUnlock) {
    Client client(short_watchdog());
    Lock lock(client, "mixed");
    lock.lock();
    lock.lock(std::chrono::seconds(5));
    lock.unlock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 1u);
    lock.unlock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
}

// A renewal raises the TTL to the watchdog lease and never lowers it: a nested
// hold's longer explicit lease is kept, as a read-write lock keeps its
// readers' (rwlock/lease_test.cpp).
TEST_F(Leases, TheWatchdogNeverCutsANestedLongerLease) {
    Client client(short_watchdog());
    Lock lock(client, "mixed");
    cache_scripts();  // script_calls() counts the renewals
    lock.lock();
    lock.lock(std::chrono::minutes(1));
    raw->command({"CONFIG", "RESETSTAT"});
    ASSERT_TRUE(eventually([&] { return script_calls() >= 1; }));  // a renewal
    EXPECT_GT(raw->integer({"PTTL", "mixed"}), 50'000);
    lock.unlock();
    EXPECT_GT(raw->integer({"PTTL", "mixed"}), 50'000);
    lock.unlock();
    EXPECT_EQ(raw->integer({"EXISTS", "mixed"}), 0);
}

TEST_F(Leases, BlockingCallsFromALeaseLostCallbackAreRefused) {
    Client client(short_watchdog());
    Lock lock(client, "callback");
    lock.lock();
    std::atomic<bool> refused{false};
    std::stop_callback callback(lock.lease_lost_token(), [&] {
        try {
            lock.is_locked();  // would wait for the loop thread it runs on
        } catch (const std::logic_error&) {
            refused = true;
        }
    });
    raw->command({"DEL", "callback"});
    EXPECT_TRUE(eventually([&] { return refused.load(); }));
    // The loop is still alive: the client keeps working.
    EXPECT_TRUE(lock.try_lock());
    lock.unlock();
}

}  // namespace
}  // namespace holdfast::testing
