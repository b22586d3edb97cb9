// Readers share, a writer excludes everyone, the writer may read (downgrade),
// a reader may not write (upgrade: a clear error, never a wait).
#include <future>
#include <mutex>
#include <system_error>

#include "core/client_core.hpp"
#include "rwlock_fixture.hpp"

namespace holdfast::testing {
namespace {

using ReadWriteSemantics = ReadWriteTest;

// Runs `f` on a thread of its own: another owner of the same client.
template <class F>
auto elsewhere(F f) {
    return std::async(std::launch::async, std::move(f)).get();
}

TEST_F(ReadWriteSemantics, ReadersShare) {
    Client a(config()), b(config());
    ReadWriteLock ra(a, "stock"), rb(b, "stock");
    ra.read_lock().lock();
    EXPECT_TRUE(rb.read_lock().try_lock());
    EXPECT_TRUE(elsewhere([&] {
        const bool got = ra.read_lock().try_lock();
        if (got) ra.read_lock().unlock();
        return got;
    }));
    EXPECT_TRUE(ra.read_lock().is_locked());
    EXPECT_FALSE(ra.write_lock().is_locked());
    auto holders = ra.read_lock().holders();
    ASSERT_EQ(holders.size(), 2u);
    EXPECT_TRUE(ra.write_lock().holders().empty());
    EXPECT_EQ(ra.read_lock().hold_count(), 1);
    ra.read_lock().unlock();
    EXPECT_TRUE(ra.read_lock().is_locked());  // b still reads
    rb.read_lock().unlock();
    EXPECT_FALSE(ra.read_lock().is_locked());
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(ReadWriteSemantics, AWriterExcludesReadersAndWriters) {
    Client a(config()), b(config());
    ReadWriteLock ra(a, "stock"), rb(b, "stock");
    ra.write_lock().lock();
    EXPECT_FALSE(rb.read_lock().try_lock());
    EXPECT_FALSE(rb.write_lock().try_lock());
    EXPECT_FALSE(rb.write_lock().try_lock_for(std::chrono::milliseconds(200)));
    EXPECT_FALSE(elsewhere([&] { return ra.read_lock().try_lock() || ra.write_lock().try_lock(); }));
    EXPECT_TRUE(rb.write_lock().is_locked());
    EXPECT_FALSE(rb.read_lock().is_locked());
    auto holders = rb.write_lock().holders();
    ASSERT_EQ(holders.size(), 1u);
    EXPECT_EQ(holders[0].owner, a.current_owner());
    ra.write_lock().unlock();
    EXPECT_TRUE(rb.write_lock().try_lock());
    rb.write_lock().unlock();
}

TEST_F(ReadWriteSemantics, ReadersExcludeWriters) {
    Client a(config()), b(config());
    ReadWriteLock ra(a, "stock"), rb(b, "stock");
    ra.read_lock().lock();
    EXPECT_FALSE(rb.write_lock().try_lock());
    EXPECT_FALSE(elsewhere([&] { return ra.write_lock().try_lock(); }));
    ra.read_lock().unlock();
    EXPECT_TRUE(rb.write_lock().try_lock());
    rb.write_lock().unlock();
}

TEST_F(ReadWriteSemantics, BothSidesAreReentrant) {
    Client client(config());
    ReadWriteLock rw(client, "stock");
    rw.write_lock().lock();
    rw.write_lock().lock();
    EXPECT_EQ(rw.write_lock().hold_count(), 2);
    EXPECT_EQ(raw->string({"HGET", "stock", client.current_owner() + ":write"}), "2");
    rw.write_lock().unlock();
    EXPECT_TRUE(rw.write_lock().is_locked());
    rw.write_lock().unlock();
    EXPECT_FALSE(rw.write_lock().is_locked());

    rw.read_lock().lock();
    rw.read_lock().lock();
    EXPECT_EQ(rw.read_lock().hold_count(), 2);
    rw.read_lock().unlock();
    rw.read_lock().unlock();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(ReadWriteSemantics, TheWriterMayDowngrade) {
    Client a(config()), b(config());
    ReadWriteLock ra(a, "stock"), rb(b, "stock");
    ra.write_lock().lock();
    ra.read_lock().lock();  // the writer reads too
    EXPECT_EQ(fields("stock"), (std::map<std::string, std::string>{
                                   {"mode", "write"}, {a.current_owner() + ":write", "1"}, {a.current_owner(), "1"}}));
    EXPECT_TRUE(ra.read_lock().is_locked());
    EXPECT_TRUE(ra.write_lock().is_locked());
    EXPECT_FALSE(rb.read_lock().try_lock());  // still write-locked
    ra.write_lock().unlock();
    // Now a plain read lock: others may read, nobody may write.
    EXPECT_EQ(fields("stock"), (std::map<std::string, std::string>{{"mode", "read"}, {a.current_owner(), "1"}}));
    EXPECT_TRUE(rb.read_lock().try_lock());
    EXPECT_FALSE(elsewhere([&] { return rb.write_lock().try_lock(); }));
    rb.read_lock().unlock();
    ra.read_lock().unlock();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(ReadWriteSemantics, UpgradeIsRefusedWithAClearError) {
    Client client(config()), other(config());
    ReadWriteLock rw(client, "stock");
    rw.read_lock().lock();
    raw->command({"CONFIG", "RESETSTAT"});
    try {
        rw.write_lock().lock();
        FAIL() << "a reader took the write lock";
    } catch (const DeadlockError& e) {
        EXPECT_EQ(e.code(), std::errc::resource_deadlock_would_occur);
        const std::string what = e.what();
        EXPECT_NE(what.find("'stock'"), std::string::npos) << what;
        EXPECT_NE(what.find(client.current_owner()), std::string::npos) << what;
        EXPECT_NE(what.find("read lock"), std::string::npos) << what;
    }
    // Refused on the first attempt: it never subscribed, never waited.
    EXPECT_EQ(calls("subscribe"), 0);
    EXPECT_THROW(rw.write_lock().try_lock(), DeadlockError);
    EXPECT_THROW(rw.write_lock().try_lock_for(std::chrono::seconds(5)), DeadlockError);
    // Also with other readers present, and for explicit owners.
    ReadWriteLock(other, "stock").read_lock().lock();
    const std::string owner = client.new_owner();
    rw.read_lock().async_lock(owner).get();
    auto refused = rw.write_lock().async_lock(owner);
    ASSERT_EQ(refused.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_THROW(refused.get(), DeadlockError);
    // Nothing changed: the read holds stand, nothing renews a write hold.
    EXPECT_EQ(rw.read_lock().hold_count(), 1);
    EXPECT_EQ(fields("stock").size(), 4u);  // mode and three readers
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 2u);
    EXPECT_EQ(detail::core_of(client).transport.subscriber().channel_count(), 0u);
    rw.read_lock().async_release(owner).get();
    rw.read_lock().unlock();
    ReadWriteLock(other, "stock").read_lock().unlock();
    rw.write_lock().lock();  // released, the same thread may write
    rw.write_lock().unlock();
}

TEST_F(ReadWriteSemantics, UnlockingASideNotHeldIsNotOwnerError) {
    Client client(config());
    ReadWriteLock rw(client, "stock");
    try {
        rw.read_lock().release();
        FAIL() << "unlocked a read lock never taken";
    } catch (const NotOwnerError& e) {
        EXPECT_NE(std::string(e.what()).find("read lock 'stock'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(client.current_owner()), std::string::npos) << e.what();
    }
    rw.read_lock().lock();
    EXPECT_THROW(rw.write_lock().release(), NotOwnerError);
    rw.read_lock().unlock();
    rw.write_lock().lock();
    EXPECT_THROW(rw.read_lock().release(), NotOwnerError);
    rw.write_lock().unlock();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(ReadWriteSemantics, ForceUnlockActsOnItsOwnSideOnly) {
    Client client(config()), admin(config());
    ReadWriteLock rw(client, "stock"), forced(admin, "stock");
    rw.read_lock().lock();
    rw.read_lock().lock();
    EXPECT_FALSE(forced.write_lock().force_unlock());
    EXPECT_EQ(raw->integer({"EXISTS", "stock"}), 1);
    EXPECT_TRUE(forced.read_lock().force_unlock());
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);  // the hold keys went with it
    EXPECT_THROW(rw.read_lock().release(), NotOwnerError);
    EXPECT_THROW(rw.read_lock().release(), NotOwnerError);

    rw.write_lock().lock();
    EXPECT_FALSE(forced.read_lock().force_unlock());
    EXPECT_TRUE(forced.write_lock().force_unlock());
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
    EXPECT_THROW(rw.write_lock().release(), NotOwnerError);
}

TEST_F(ReadWriteSemantics, StdAdaptorsWorkOnEachSide) {
    Client client(config());
    ReadWriteLock rw(client, "stock");
    {
        std::lock_guard reading(rw.read_lock());
        EXPECT_TRUE(rw.read_lock().is_held_by_current_thread());
    }
    {
        std::unique_lock writing(rw.write_lock(), std::chrono::seconds(1));
        EXPECT_TRUE(writing.owns_lock());
    }
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(ReadWriteSemantics, AnEmptyNameIsRefused) {
    Client client(config());
    EXPECT_THROW(ReadWriteLock(client, ""), std::invalid_argument);
    ReadWriteLock rw(client, "named");
    EXPECT_EQ(rw.name(), "named");
    EXPECT_EQ(rw.read_lock().name(), "named");
    EXPECT_EQ(rw.write_lock().name(), "named");
}

TEST_F(ReadWriteSemantics, AHashThatIsNotAReadWriteLockIsWaitedOn) {
    Client client(config());
    ReadWriteLock rw(client, "plain");
    Lock plain(client, "plain");  // an RLock: a hash without `mode`
    plain.lock();
    EXPECT_FALSE(elsewhere([&] { return rw.read_lock().try_lock() || rw.write_lock().try_lock(); }));
    EXPECT_EQ(raw->integer({"HEXISTS", "plain", "mode"}), 0);  // left alone
    plain.unlock();
}

}  // namespace
}  // namespace holdfast::testing
