// The spin lock: RLock layout, no pub/sub, backoff between attempts.
#include <future>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using SpinLocking = RedisTest;

TEST_F(SpinLocking, UsesTheRLockLayoutAndIsReentrant) {
    Client client(config());
    SpinLock lock(client, "spin");
    lock.lock();
    lock.lock();
    EXPECT_EQ(raw->string({"TYPE", "spin"}), "hash");
    EXPECT_EQ(raw->string({"HGET", "spin", client.current_owner()}), "2");
    EXPECT_EQ(lock.hold_count(), 2);
    lock.unlock();
    lock.unlock();
    EXPECT_EQ(raw->integer({"EXISTS", "spin"}), 0);
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
}

TEST_F(SpinLocking, ExcludesAnRLockOnTheSameName) {
    Client a(config()), b(config());
    Lock rlock(a, "shared");
    SpinLock spin(b, "shared");
    rlock.lock();
    EXPECT_FALSE(spin.try_lock());
    rlock.unlock();
    EXPECT_TRUE(spin.try_lock());
    EXPECT_FALSE(rlock.try_lock());
    spin.unlock();
}

// A waiter never subscribes, the unlock publishes nothing, and the waiter
// still gets the lock after the holder lets go.
TEST_F(SpinLocking, WaitsWithoutPubSub) {
    Client holder_client(config()), waiter_client(config());
    SpinLock held(holder_client, "spin"), wanted(waiter_client, "spin");
    held.lock();
    raw->command({"CONFIG", "RESETSTAT"});
    auto waiter = std::async(std::launch::async, [&] {
        const bool got = wanted.try_lock_for(std::chrono::seconds(30));
        if (got) wanted.unlock();
        return got;
    });
    ASSERT_TRUE(eventually([&] { return script_calls() >= 3; }));
    EXPECT_EQ(detail::core_of(waiter_client).transport.subscriber().channel_count(), 0u);
    EXPECT_EQ(raw->command({"PUBSUB", "CHANNELS"})->elements, 0u);
    held.unlock();
    ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(waiter.get());
    EXPECT_EQ(calls("publish"), 0);
    EXPECT_EQ(calls("subscribe"), 0);
}

// The backoff doubles to 128 ms: a waiter behind a 1.5 s hold makes a few
// dozen attempts at most, where a 1 ms poll would make hundreds.
TEST_F(SpinLocking, BacksOffExponentially) {
    Client holder_client(config()), waiter_client(config());
    SpinLock held(holder_client, "spin"), wanted(waiter_client, "spin");
    held.lock(std::chrono::milliseconds(1500));
    raw->command({"CONFIG", "RESETSTAT"});
    EXPECT_TRUE(wanted.try_lock_for(std::chrono::seconds(30)));
    // 1+2+...+64 ms is about 8 attempts; then 64 ms each, jittered down to
    // as little as half (acquire_machine.cpp): at least 32 ms each.
    EXPECT_LE(script_calls(), 8 + 1500 / 32 + 2);
    wanted.unlock();
}

}  // namespace
}  // namespace holdfast::testing
