// Bad-input catalog, a full server (maxmemory, noeviction): a release frees
// memory, so the last release of every primitive must still work there; the
// permit comes back, the count goes down and the waiters are told.
#include "bad_inputs/bad_inputs.hpp"

namespace holdfast::testing {
namespace {

/// The next message `listener` (subscribed) receives is `payload` on `channel`.
void expect_message(support::SyncRedis& listener, const std::string& channel, const std::string& payload) {
    auto message = listener.read_reply();
    ASSERT_EQ(message->elements, 3u);
    EXPECT_EQ(std::string(message->element[1]->str), channel);
    EXPECT_EQ(std::string(message->element[2]->str), payload);
}

TEST_F(FullServer, ReentrantHoldsOfEveryLockUnlock) {
    Client client(config());
    Lock lock(client, "job");
    FencedLock fenced(client, "fenced");
    SpinLock spin(client, "spin");
    for (Lock* each : std::initializer_list<Lock*>{&lock, &fenced, &spin}) {
        each->lock();
        each->lock();
    }
    const long long keys = fill() + 1;  // and the fenced lock's token counter
    for (Lock* each : std::initializer_list<Lock*>{&lock, &fenced, &spin}) {
        each->unlock();
        EXPECT_EQ(raw->string({"HGET", each->name(), client.current_owner()}), "1") << each->name();
        each->unlock();
    }
    expect_nothing_left(client, keys);
}

TEST_F(FullServer, AnUnlockWakesAWaiter) {
    Client holder(config()), other(config());
    Lock held(holder, "job"), wanted(other, "job");
    held.lock();
    fill();
    auto waiter = wanted.async_try_lock(other.new_owner(), 60s);
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{job}") == 1; }));
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_lock__channel:{job}"});
    held.unlock();
    expect_message(listener, "redisson_lock__channel:{job}", "0");
    // The waiter's own acquire needs memory: it is refused, not left asleep.
    ASSERT_EQ(waiter.wait_for(20s), std::future_status::ready);
    // Told by its code as a value, not only in the text.
    std::string why;
    try {
        waiter.get();
    } catch (const ServerError& e) {
        EXPECT_EQ(e.code(), errc::out_of_memory);
        EXPECT_EQ(e.code(), std::errc::not_enough_memory);
        EXPECT_EQ(e.reply_code(), "OOM");
        why = e.what();
    }
    EXPECT_TRUE(mentions(why, {"OOM"}));
}

TEST_F(FullServer, ReadAndWriteLocksUnlock) {
    Client client(config()), other(config());
    ReadWriteLock doc(client, "doc"), page(client, "page");
    ReadWriteLock doc_too(other, "doc");
    doc.read_lock().lock();
    doc.read_lock().lock();
    doc_too.read_lock().lock();
    page.write_lock().lock();
    page.write_lock().lock();
    page.read_lock().lock();  // a downgrade: the writer reads too
    const long long keys = fill();
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_rwlock:{doc}"});  // one confirmation per command
    listener.command({"SUBSCRIBE", "redisson_rwlock:{page}"});

    doc.read_lock().unlock();
    doc.read_lock().unlock();
    EXPECT_EQ(raw->integer({"HEXISTS", "doc", client.current_owner()}), 0);
    EXPECT_EQ(raw->string({"HGET", "doc", other.current_owner()}), "1") << "the other reader lost its hold";
    doc_too.read_lock().unlock();
    expect_message(listener, "redisson_rwlock:{doc}", "0");

    page.write_lock().unlock();
    page.write_lock().unlock();
    EXPECT_EQ(raw->string({"HGET", "page", "mode"}), "read");
    expect_message(listener, "redisson_rwlock:{page}", "1");
    page.read_lock().unlock();
    expect_message(listener, "redisson_rwlock:{page}", "0");
    EXPECT_EQ(raw->integer({"DBSIZE"}), keys) << "a hash or a read-hold key was left behind";
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
}

TEST_F(FullServer, ForceUnlocksWork) {
    Client client(config());
    Lock lock(client, "job");
    ReadWriteLock doc(client, "doc");
    lock.lock();
    doc.read_lock().lock();
    const long long keys = fill();
    EXPECT_TRUE(lock.force_unlock());
    EXPECT_TRUE(doc.read_lock().force_unlock());
    EXPECT_EQ(raw->integer({"DBSIZE"}), keys);
}

TEST_F(FullServer, ASemaphoreGetsItsPermitBack) {
    Client client(config());
    Semaphore slots(client, "slots");
    ASSERT_TRUE(slots.try_set_permits(2));
    slots.acquire(2);
    fill();
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_sc:{slots}"});
    slots.release();
    expect_message(listener, "redisson_sc:{slots}", "1");
    slots.release();
    expect_message(listener, "redisson_sc:{slots}", "2");
    EXPECT_EQ(raw->string({"GET", "slots"}), "2");
}

TEST_F(FullServer, AnExpirableSemaphoreGetsItsPermitBack) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    ASSERT_TRUE(pool.try_set_permits(1));
    const std::string id = pool.acquire();
    fill();
    pool.release(id);
    EXPECT_EQ(raw->string({"GET", "pool"}), "1");
    EXPECT_EQ(raw->integer({"ZCARD", "{pool}:timeout"}), 0);
}

TEST_F(FullServer, ALatchCountsDownAndOpens) {
    Client client(config());
    CountDownLatch gate(client, "gate");
    ASSERT_TRUE(gate.try_set_count(2));
    fill();
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_countdownlatch__channel__{gate}"});
    gate.count_down();
    EXPECT_EQ(gate.count(), 1);
    gate.count_down();
    expect_message(listener, "redisson_countdownlatch__channel__{gate}", "0");
    EXPECT_EQ(gate.count(), 0);
    EXPECT_TRUE(gate.await_for(0ms));
    EXPECT_EQ(raw->integer({"EXISTS", "gate"}), 0);
}

TEST_F(FullServer, ASimpleLockUnlocks) {
    Client client(config());
    SimpleLock lock(client, "job");
    lock.lock();
    const long long keys = fill();
    lock.unlock();
    expect_nothing_left(client, keys);
}

}  // namespace
}  // namespace holdfast::testing
