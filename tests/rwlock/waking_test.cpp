// A read unlock wakes a waiting writer; a write unlock wakes every waiting
// reader. Every hold here has the 30 s watchdog lease, so a waiter through
// within seconds was woken by the message, not by the TTL.
#include <atomic>
#include <future>

#include "core/client_core.hpp"
#include "rwlock_fixture.hpp"

namespace holdfast::testing {
namespace {

using ReadWriteWaking = ReadWriteTest;

TEST_F(ReadWriteWaking, TheLastReadUnlockWakesAWaitingWriter) {
    Client readers(config()), writer_client(config());
    ReadWriteLock held(readers, "stock"), wanted(writer_client, "stock");
    held.read_lock().lock();
    const std::string second = readers.new_owner();
    held.read_lock().async_lock(second).get();
    raw->command({"CONFIG", "RESETSTAT"});
    auto writer = std::async(std::launch::async, [&] {
        const bool got = wanted.write_lock().try_lock_for(std::chrono::seconds(25));
        if (got) wanted.write_lock().unlock();
        return got;
    });
    ASSERT_TRUE(eventually([&] { return subscribers(channel("stock")) == 1; }));
    ASSERT_TRUE(eventually([&] { return script_calls() >= 2; }));  // tried again once subscribed
    held.read_lock().unlock();  // another reader remains: nothing to wake for
    EXPECT_EQ(raw->integer({"EXISTS", "stock"}), 1);
    const auto unlocked = std::chrono::steady_clock::now();
    held.read_lock().async_release(second).get();
    ASSERT_EQ(writer.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(writer.get());
    EXPECT_LT(std::chrono::steady_clock::now() - unlocked, std::chrono::seconds(5));
    EXPECT_TRUE(eventually([&] { return subscribers(channel("stock")) == 0; }));
}

// Readers in two clients, three threads each: one message wakes all six, and
// all six hold the lock at the same time.
TEST_F(ReadWriteWaking, AWriteUnlockWakesEveryWaitingReader) {
    Client writer_client(config()), left(config()), right(config());
    ReadWriteLock writer(writer_client, "stock"), on_left(left, "stock"), on_right(right, "stock");
    writer.write_lock().lock();
    std::atomic<bool> release{false};
    std::vector<std::future<bool>> readers;
    for (int i = 0; i < 6; ++i) {
        ReadWriteLock& rw = i % 2 ? on_left : on_right;
        readers.push_back(std::async(std::launch::async, [&rw, &release] {
            if (!rw.read_lock().try_lock_for(std::chrono::seconds(25))) return false;
            while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(5));
            rw.read_lock().unlock();
            return true;
        }));
    }
    ASSERT_TRUE(eventually([&] { return subscribers(channel("stock")) == 2; }));
    const auto unlocked = std::chrono::steady_clock::now();
    writer.write_lock().unlock();
    EXPECT_TRUE(eventually([&] { return fields("stock").size() == 7; }, std::chrono::seconds(10)))
        << "not every reader got in";  // mode and six readers
    EXPECT_LT(std::chrono::steady_clock::now() - unlocked, std::chrono::seconds(5));
    EXPECT_FALSE(ReadWriteLock(writer_client, "stock").write_lock().try_lock());
    release = true;
    for (auto& r : readers) {
        ASSERT_EQ(r.wait_for(std::chrono::seconds(20)), std::future_status::ready);
        EXPECT_TRUE(r.get());
    }
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
    EXPECT_TRUE(eventually([&] { return subscribers(channel("stock")) == 0; }));
}

// Releasing the write lock while still reading lets the waiting readers share.
TEST_F(ReadWriteWaking, ADowngradeWakesWaitingReaders) {
    Client writer_client(config()), reader_client(config());
    ReadWriteLock writer(writer_client, "stock"), reader(reader_client, "stock");
    writer.write_lock().lock();
    writer.read_lock().lock();
    auto waiting = std::async(std::launch::async, [&] {
        const bool got = reader.read_lock().try_lock_for(std::chrono::seconds(25));
        if (got) reader.read_lock().unlock();
        return got;
    });
    ASSERT_TRUE(eventually([&] { return subscribers(channel("stock")) == 1; }));
    const auto downgraded = std::chrono::steady_clock::now();
    writer.write_lock().unlock();
    ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(waiting.get());
    EXPECT_LT(std::chrono::steady_clock::now() - downgraded, std::chrono::seconds(5));
    EXPECT_TRUE(writer.read_lock().is_held_by_current_thread());
    writer.read_lock().unlock();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

// Writers queue behind a writer and behind each other; each unlock lets the next in.
TEST_F(ReadWriteWaking, WritersTakeTurns) {
    Client holder(config()), waiters(config());
    ReadWriteLock held(holder, "stock"), wanted(waiters, "stock");
    held.write_lock().lock();
    std::atomic<int> inside{0};
    std::atomic<bool> overlap{false};
    std::vector<std::future<bool>> writers;
    for (int i = 0; i < 4; ++i)
        writers.push_back(std::async(std::launch::async, [&] {
            if (!wanted.write_lock().try_lock_for(std::chrono::seconds(25))) return false;
            if (++inside > 1) overlap = true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            --inside;
            wanted.write_lock().unlock();
            return true;
        }));
    ASSERT_TRUE(eventually([&] { return subscribers(channel("stock")) == 1; }));
    held.write_lock().unlock();
    for (auto& w : writers) {
        ASSERT_EQ(w.wait_for(std::chrono::seconds(20)), std::future_status::ready);
        EXPECT_TRUE(w.get());
    }
    EXPECT_FALSE(overlap.load());
    EXPECT_EQ(detail::core_of(waiters).watchdog.tracked(), 0u);
}

}  // namespace
}  // namespace holdfast::testing
