// Read holds live by their own keys: the watchdog renews them, explicit
// leases end them, a dead reader's hold does not outlive the live ones, and
// nothing is left behind.
#include <future>
#include <thread>

#include "core/client_core.hpp"
#include "rwlock_fixture.hpp"

namespace holdfast::testing {
namespace {

using ReadWriteLeases = ReadWriteTest;

TEST_F(ReadWriteLeases, TheWatchdogRenewsReadHoldsThroughTheirKeys) {
    Client client(short_watchdog());
    ReadWriteLock rw(client, "stock");
    const std::string owner = client.current_owner();
    rw.read_lock().lock();
    rw.read_lock().lock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 1u);
    const std::vector<std::string> keys{"stock", hold_key("stock", owner, 1), hold_key("stock", owner, 2)};
    const auto start = std::chrono::steady_clock::now();
    long long lowest = 1500;
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(4800)) {
        for (const auto& key : keys) lowest = std::min(lowest, raw->integer({"PTTL", key}));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_GT(lowest, 0) << "a read hold expired while held";
    EXPECT_EQ(rw.read_lock().hold_count(), 2);
    rw.read_lock().unlock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 1u);
    rw.read_lock().unlock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(ReadWriteLeases, ADowngradedWriterKeepsBothHolds) {
    Client client(short_watchdog());
    ReadWriteLock rw(client, "stock");
    rw.write_lock().lock();
    rw.read_lock().lock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 2u);  // one renewal per side
    const auto start = std::chrono::steady_clock::now();
    long long lowest = 1500;
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(4800)) {
        lowest = std::min(lowest, raw->integer({"PTTL", "stock"}));
        lowest = std::min(lowest, raw->integer({"PTTL", hold_key("stock", client.current_owner(), 1)}));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_GT(lowest, 0);
    rw.write_lock().unlock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 1u);
    EXPECT_TRUE(rw.read_lock().is_held_by_current_thread());
    rw.read_lock().unlock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
}

// The writer's renewals and partial unlocks never lower the hash's TTL: a
// read hold taken with a longer explicit lease (a downgrade) needs it, and
// would otherwise die with the hash once the write lock is gone.
TEST_F(ReadWriteLeases, TheWritersRenewalKeepsALongerReadLeaseAlive) {
    Client client(short_watchdog());
    ReadWriteLock rw(client, "stock");
    cache_scripts();  // script_calls() counts the renewals
    rw.write_lock().lock();
    rw.write_lock().lock();
    rw.read_lock().lock(std::chrono::minutes(1));
    raw->command({"CONFIG", "RESETSTAT"});
    ASSERT_TRUE(eventually([&] { return script_calls() >= 1; }));  // the writer's renewal
    EXPECT_GT(raw->integer({"PTTL", "stock"}), 50'000);
    rw.write_lock().unlock();  // the re-entered hold: the rest stays held
    EXPECT_GT(raw->integer({"PTTL", "stock"}), 50'000);
    rw.write_lock().unlock();
    EXPECT_GT(raw->integer({"PTTL", "stock"}), 50'000);
    EXPECT_TRUE(rw.read_lock().is_held_by_current_thread());
    rw.read_lock().unlock();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(ReadWriteLeases, AnExplicitReadLeaseEndsTheHold) {
    Client client(short_watchdog());
    ReadWriteLock rw(client, "stock");
    rw.read_lock().lock(std::chrono::milliseconds(600));
    EXPECT_FALSE(detail::core_of(client).watchdog.renews("stock", client.current_owner()));  // watched, not renewed
    EXPECT_LE(raw->integer({"PTTL", hold_key("stock", client.current_owner(), 1)}), 600);
    EXPECT_TRUE(eventually([&] { return raw->integer({"DBSIZE"}) == 0; }));
    EXPECT_THROW(rw.read_lock().release(), NotOwnerError);
}

// A reader that died (its hold key expired, its field still in the hash) does
// not hold the lock once the live readers are gone.
TEST_F(ReadWriteLeases, ADeadReaderDoesNotOutliveTheLiveOnes) {
    Client client(short_watchdog());
    ReadWriteLock rw(client, "stock");
    const std::string dead = "00000000-0000-4000-8000-000000000000:1";
    raw->command({"HSET", "stock", "mode", "read", dead, "1"});
    raw->command({"SET", hold_key("stock", dead, 1), "1", "PX", "1200"});
    raw->command({"PEXPIRE", "stock", "1200"});
    rw.read_lock().lock();
    // The live reader's watchdog (every 500 ms) renews its own hold only, so
    // the dead reader's key runs out while the lock lives on.
    EXPECT_TRUE(eventually([&] { return raw->integer({"EXISTS", hold_key("stock", dead, 1)}) == 0; }));
    EXPECT_EQ(raw->integer({"EXISTS", "stock"}), 1);
    EXPECT_EQ(raw->integer({"HEXISTS", "stock", dead}), 1);
    rw.read_lock().unlock();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
    EXPECT_TRUE(rw.write_lock().try_lock());
    rw.write_lock().unlock();
}

TEST_F(ReadWriteLeases, LosingAReadHoldStopsItsToken) {
    Client client(short_watchdog());
    ReadWriteLock rw(client, "stock");
    EXPECT_FALSE(rw.read_lock().lease_lost_token().stop_possible());
    rw.read_lock().lock();
    auto read_lost = rw.read_lock().lease_lost_token();
    ASSERT_TRUE(read_lost.stop_possible());
    EXPECT_FALSE(rw.write_lock().lease_lost_token().stop_possible());
    raw->command({"DEL", "stock"});
    EXPECT_TRUE(eventually([&] { return read_lost.stop_requested(); }));
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
    EXPECT_THROW(rw.read_lock().release(), NotOwnerError);
}

// Waits that time out, an upgrade refused, holds of both sides: afterwards no
// key, no renewal, no subscription remains.
TEST_F(ReadWriteLeases, NothingIsLeftBehind) {
    Client a(config()), b(config());
    ReadWriteLock ra(a, "stock"), rb(b, "stock");
    ra.read_lock().lock();
    EXPECT_FALSE(rb.write_lock().try_lock_for(std::chrono::milliseconds(300)));
    EXPECT_THROW(ra.write_lock().lock(), DeadlockError);
    rb.read_lock().lock();
    ra.read_lock().unlock();
    rb.read_lock().unlock();
    ra.write_lock().lock();
    ra.read_lock().lock();
    EXPECT_FALSE(rb.read_lock().try_lock_for(std::chrono::milliseconds(300)));
    ra.write_lock().unlock();
    ra.read_lock().unlock();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
    for (Client* c : {&a, &b}) {
        EXPECT_EQ(detail::core_of(*c).watchdog.tracked(), 0u);
        // Off the channels once the wait queues' linger is over (primitive/wait_queues.hpp).
        EXPECT_TRUE(eventually([c] { return detail::core_of(*c).transport.subscriber().channel_count() == 0; }));
    }
    EXPECT_TRUE(eventually([&] { return subscribers(channel("stock")) == 0; }));
}

}  // namespace
}  // namespace holdfast::testing
