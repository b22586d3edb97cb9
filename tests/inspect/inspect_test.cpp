// inspect(): each layout written by the real primitive where holdfast has it,
// else with the raw commands Redisson (or redsync) sends, and read back.
#include "inspect/layouts.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using Inspect = RedisTest;
using Kind = LockState::Kind;
using SystemClock = std::chrono::system_clock;

std::int64_t epoch_ms(SystemClock::time_point when = SystemClock::now()) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count();
}

LockState::TimePoint at_epoch_ms(std::int64_t ms) { return LockState::TimePoint(std::chrono::milliseconds(ms)); }

TEST_F(Inspect, AFreeNameHasNothing) {
    Client client(config());
    const LockState state = inspect(client, "job");
    EXPECT_EQ(state.name, "job");
    EXPECT_EQ(state.kind, Kind::free);
    EXPECT_EQ(state.type, "none");
    EXPECT_FALSE(state.ttl);
    EXPECT_TRUE(state.holders.empty());
    EXPECT_TRUE(state.queue.empty());
    EXPECT_FALSE(state.fencing_token);
    EXPECT_TRUE(state.permits.empty());
}

TEST_F(Inspect, ALockShowsItsHoldersCountsAndLease) {
    Client client(config());
    Lock lock(client, "job");
    lock.lock();
    lock.lock();
    const std::string other = client.new_owner();
    raw->command({"HSET", "job", other, "1"});  // a second holder, as only a hand could write it
    const LockState state = inspect(client, "job");
    EXPECT_EQ(state.kind, Kind::lock);
    EXPECT_EQ(state.type, "hash");
    ASSERT_TRUE(state.ttl);
    EXPECT_GT(*state.ttl, 0ms);
    EXPECT_LE(*state.ttl, 30s);
    ASSERT_EQ(state.holders.size(), 2u);
    EXPECT_EQ(state.holders[0].owner, client.current_owner());
    EXPECT_EQ(state.holders[0].hold_count, 2);
    EXPECT_EQ(state.holders[1].owner, other);
    EXPECT_FALSE(state.holders[0].writer);
    EXPECT_FALSE(state.holders[0].live_read_holds);
    lock.unlock();
    lock.unlock();
}

TEST_F(Inspect, AHashWithoutExpiryHasNoTtl) {
    raw->command({"HSET", "job", "someone:1", "1"});
    Client client(config());
    const LockState state = inspect(client, "job");
    EXPECT_EQ(state.kind, Kind::lock);
    EXPECT_FALSE(state.ttl);
}

TEST_F(Inspect, AFairLockShowsItsQueueHeadFirstWithDeadlines) {
    QueuedFairLock fair(config(), *raw, "job");
    ASSERT_TRUE(fair.ready());
    // A Redisson waiter behind it, with RFairLock's five-minute budget; and one without a deadline.
    const std::int64_t java_deadline = epoch_ms() + 300000;
    fair.append("java:1", java_deadline);
    fair.append("lost:1", std::nullopt);

    Client client(config());
    const LockState state = inspect(client, "job");
    EXPECT_EQ(state.kind, Kind::lock);
    ASSERT_EQ(state.holders.size(), 1u);
    EXPECT_EQ(state.holders[0].owner, fair.holder());
    ASSERT_EQ(state.queue.size(), 3u);
    EXPECT_EQ(state.queue[0].owner, fair.waiter());
    ASSERT_TRUE(state.queue[0].deadline);
    EXPECT_GT(*state.queue[0].deadline, SystemClock::now());
    EXPECT_LT(*state.queue[0].deadline, SystemClock::now() + 340s);  // holder's lease + Redisson's 5 min budget
    EXPECT_EQ(state.queue[1].owner, "java:1");
    EXPECT_EQ(state.queue[1].deadline, at_epoch_ms(java_deadline));
    EXPECT_EQ(state.queue[2].owner, "lost:1");
    EXPECT_FALSE(state.queue[2].deadline);
}

TEST_F(Inspect, AFencedLockShowsTheLastTokenEvenWhenFree) {
    Client client(config());
    FencedLock lock(client, "ledger");
    const std::int64_t token = lock.lock_and_get_token();
    LockState state = inspect(client, "ledger");
    EXPECT_EQ(state.kind, Kind::lock);
    EXPECT_EQ(state.fencing_token, token);
    lock.unlock();
    state = inspect(client, "ledger");
    EXPECT_EQ(state.kind, Kind::free);
    EXPECT_EQ(state.fencing_token, token);
}

TEST_F(Inspect, AReadLockShowsEachReaderAndItsLiveLeases) {
    Client client(config());
    ReadWriteLock rw(client, "doc");
    const std::string other = hold_reads(client, rw);

    LockState state = inspect(client, "doc");
    EXPECT_EQ(state.kind, Kind::read_write_lock);
    EXPECT_EQ(state.mode, "read");
    ASSERT_TRUE(state.ttl);
    ASSERT_EQ(state.holders.size(), 2u);
    EXPECT_EQ(state.holders[0].owner, client.current_owner());
    EXPECT_EQ(state.holders[0].hold_count, 2);
    EXPECT_FALSE(state.holders[0].writer);
    EXPECT_EQ(state.holders[0].live_read_holds, 2);
    EXPECT_EQ(state.holders[1].owner, other);
    EXPECT_EQ(state.holders[1].live_read_holds, 1);

    // A read hold whose lease key expired still counts in the hash.
    raw->command({"DEL", "{doc}:" + client.current_owner() + ":rwlock_timeout:2"});
    state = inspect(client, "doc");
    EXPECT_EQ(state.holders[0].hold_count, 2);
    EXPECT_EQ(state.holders[0].live_read_holds, 1);
    EXPECT_TRUE(state.queue.empty());
    EXPECT_FALSE(state.fencing_token);
}

TEST_F(Inspect, AWriteLockShowsTheWriterFirstThenItsDowngradedReads) {
    Client client(config());
    ReadWriteLock rw(client, "doc");
    rw.write_lock().lock();
    rw.read_lock().lock();
    const LockState state = inspect(client, "doc");
    EXPECT_EQ(state.kind, Kind::read_write_lock);
    EXPECT_EQ(state.mode, "write");
    ASSERT_EQ(state.holders.size(), 2u);
    EXPECT_TRUE(state.holders[0].writer);
    EXPECT_EQ(state.holders[0].owner, client.current_owner());
    EXPECT_EQ(state.holders[0].hold_count, 1);
    EXPECT_FALSE(state.holders[0].live_read_holds);
    EXPECT_FALSE(state.holders[1].writer);
    EXPECT_EQ(state.holders[1].owner, client.current_owner());
    EXPECT_EQ(state.holders[1].live_read_holds, 1);
    rw.read_lock().unlock();
    rw.write_lock().unlock();
}

TEST_F(Inspect, ASemaphoreOrLatchIsACounter) {
    // RSemaphore.trySetPermits and RCountDownLatch.trySetCount both write one integer.
    raw->command({"SET", "permits", "3", "NX"});
    Client client(config());
    const LockState state = inspect(client, "permits");
    EXPECT_EQ(state.kind, Kind::counter);
    EXPECT_EQ(state.type, "string");
    EXPECT_EQ(state.count, 3);
    EXPECT_FALSE(state.ttl);
    EXPECT_TRUE(state.queue.empty());
}

TEST_F(Inspect, APermitExpirableSemaphoreShowsItsPermitsSoonestFirst) {
    const std::int64_t now = epoch_ms();
    const std::string a(16, '\xab'), b = "0123456789abcdef", c(16, '\0');
    raw->command({"SET", "pool", "1"});
    raw->command({"ZADD", "{pool}:timeout", "922337203685477", a, std::to_string(now + 5000), b,
                  std::to_string(now - 100), c});
    Client client(config());
    const LockState state = inspect(client, "pool");
    EXPECT_EQ(state.kind, Kind::permit_expirable_semaphore);
    EXPECT_EQ(state.count, 1);
    ASSERT_EQ(state.permits.size(), 3u);
    EXPECT_EQ(state.permits[0].id, "00000000000000000000000000000000");
    EXPECT_EQ(state.permits[0].expires, at_epoch_ms(now - 100));
    EXPECT_EQ(state.permits[1].id, "30313233343536373839616263646566");
    EXPECT_EQ(state.permits[1].expires, at_epoch_ms(now + 5000));
    EXPECT_EQ(state.permits[2].id, "abababababababababababababababab");
    EXPECT_FALSE(state.permits[2].expires);
}

TEST_F(Inspect, ASetNxPxStringIsASimpleLock) {
    // go-redsync's token: 16 random bytes in base64.
    raw->command({"SET", "job", "q2rBnx4H0dTLXX0g6JmPyA==", "NX", "PX", "5000"});
    Client client(config());
    const LockState state = inspect(client, "job");
    EXPECT_EQ(state.kind, Kind::simple_lock);
    EXPECT_EQ(state.token, "q2rBnx4H0dTLXX0g6JmPyA==");
    ASSERT_TRUE(state.ttl);
    EXPECT_LE(*state.ttl, 5s);
    EXPECT_FALSE(state.fencing_token);
}

TEST_F(Inspect, HoldfastsOwnSimpleLockReadsBack) {
    Client client(config());
    SimpleLock lock(client, "job");
    lock.lock();
    const LockState state = inspect(client, "job");
    EXPECT_EQ(state.kind, Kind::simple_lock);
    EXPECT_EQ(state.type, "string");
    EXPECT_EQ(state.token, client.current_owner());
    ASSERT_TRUE(state.ttl);
    EXPECT_GT(*state.ttl, 0ms);
    EXPECT_LE(*state.ttl, 30s);
    lock.unlock();
    EXPECT_EQ(inspect(client, "job").kind, Kind::free);
}

TEST_F(Inspect, HoldfastsOwnSemaphoresAndLatchReadBack) {
    Client client(config());
    Semaphore semaphore(client, "permits");
    ASSERT_TRUE(semaphore.try_set_permits(5));
    semaphore.acquire(2);
    LockState state = inspect(client, "permits");
    EXPECT_EQ(state.kind, Kind::counter);
    EXPECT_EQ(state.count, 3);

    CountDownLatch latch(client, "latch");
    ASSERT_TRUE(latch.try_set_count(2));
    latch.count_down();
    state = inspect(client, "latch");
    EXPECT_EQ(state.kind, Kind::counter);
    EXPECT_EQ(state.count, 1);
    latch.count_down();
    EXPECT_EQ(inspect(client, "latch").kind, Kind::free);  // an open latch has no key

    PermitExpirableSemaphore pool(client, "pool");
    ASSERT_TRUE(pool.try_set_permits(3));
    const auto leased = pool.acquire(10s);
    const auto kept = pool.acquire();
    state = inspect(client, "pool");
    EXPECT_EQ(state.kind, Kind::permit_expirable_semaphore);
    EXPECT_EQ(state.count, 1);
    ASSERT_EQ(state.permits.size(), 2u);
    EXPECT_EQ(state.permits[0].id, leased);
    ASSERT_TRUE(state.permits[0].expires);
    EXPECT_GT(*state.permits[0].expires, SystemClock::now());
    EXPECT_LE(*state.permits[0].expires, SystemClock::now() + 10s);
    EXPECT_EQ(state.permits[1].id, kept);
    EXPECT_FALSE(state.permits[1].expires);
}

TEST_F(Inspect, OtherKeysAreNotPrimitives) {
    raw->command({"RPUSH", "list", "x"});
    raw->command({"SADD", "set", "x"});
    raw->command({"ZADD", "zset", "1", "x"});
    raw->command({"HSET", "hash", "owner:1", "many"});
    raw->command({"HSET", "rw", "mode", "sideways"});
    Client client(config());
    const std::vector<std::pair<std::string, std::string>> expected{
        {"list", "a list"},
        {"set", "a set"},
        {"zset", "a sorted set"},
        {"hash", "a hash with field 'owner:1' = 'many' (not a hold count)"},
        {"rw", "a hash with field 'mode' = 'sideways' (not read or write)"}};
    for (const auto& [name, description] : expected) {
        const LockState state = inspect(client, name);
        EXPECT_EQ(state.kind, Kind::not_a_primitive) << name;
        EXPECT_EQ(state.description, description) << name;
    }
}

// A lock's listed waiters and the promise of a targeted wake-up
// (lock/handoff.lua.part) are side keys of the lock's name, not names.
TEST_F(Inspect, TargetedWakeUpKeysNameTheirLock) {
    Client client(config());
    Lock held(client, "door");
    held.lock();
    raw->command({"ZADD", "holdfast_lock_waiters:{door}", "1", "16777216"});
    raw->command({"SET", "holdfast_lock_handoff:{door}", "16777216", "PX", "60000"});
    raw->command({"SET", "holdfast_lock_handoff:{gone}", "16777216", "PX", "60000"});
    EXPECT_EQ(find_names(client), (std::vector<std::string>{"door", "gone"}));
    held.unlock();
}

TEST_F(Inspect, NamesWithBracesKeepTheirOwnHashTag) {
    Client client(config());
    FairLock fair(client, "orders{7}");
    fair.lock();
    raw->command({"RPUSH", "redisson_lock_queue:orders{7}", "java:1"});
    LockState state = inspect(client, "orders{7}");
    ASSERT_EQ(state.queue.size(), 1u);
    EXPECT_EQ(state.queue[0].owner, "java:1");
    fair.unlock();

    ReadWriteLock rw(client, "doc{7}");
    rw.read_lock().lock();
    ASSERT_EQ(raw->integer({"EXISTS", "doc{7}:" + client.current_owner() + ":rwlock_timeout:1"}), 1);
    state = inspect(client, "doc{7}");
    ASSERT_EQ(state.holders.size(), 1u);
    EXPECT_EQ(state.holders[0].live_read_holds, 1);
    rw.read_lock().unlock();

    raw->command({"SET", "pool{7}", "0"});
    raw->command({"ZADD", "pool{7}:timeout", "922337203685477", "p"});
    state = inspect(client, "pool{7}");
    EXPECT_EQ(state.kind, Kind::permit_expirable_semaphore);
    ASSERT_EQ(state.permits.size(), 1u);
    EXPECT_EQ(state.permits[0].id, "70");
}

TEST_F(Inspect, ASideKeyOfAnotherTypeIsAnError) {
    raw->command({"SET", "redisson_lock_queue:{job}", "x"});
    Client client(config());
    EXPECT_THROW(inspect(client, "job"), WrongTypeError);
}

TEST_F(Inspect, AnEmptyNameIsRefused) {
    Client client(config());
    EXPECT_THROW(inspect(client, ""), std::invalid_argument);
}

}  // namespace
}  // namespace holdfast::testing
