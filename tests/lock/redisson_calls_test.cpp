// The RLock calls that had no holdfast equivalent: a leased wait a stop ends,
// queries about any owner, extending a held lease, and the queries and
// force-unlock without blocking.
#include <future>
#include <stop_token>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using namespace std::chrono_literals;
using RedissonCalls = RedisTest;

TEST_F(RedissonCalls, ALeasedWaitEndsWhenStopped) {
    Client holder_client(config()), waiter_client(config());
    Lock held(holder_client, "door"), wanted(waiter_client, "door");
    held.lock();
    std::stop_source stop;
    auto waiting = std::async(std::launch::async, [&] { return wanted.lock(20s, stop.get_token()); });
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{door}") == 1; }));
    stop.request_stop();
    ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
    EXPECT_FALSE(waiting.get());
    held.unlock();
    // Taken, it is held for the lease given, not renewed.
    EXPECT_TRUE(wanted.lock(20s, std::stop_token{}));
    EXPECT_FALSE(detail::core_of(waiter_client).watchdog.renews("door", waiter_client.current_owner()));
    const long long ttl = raw->integer({"PTTL", "door"});
    EXPECT_GT(ttl, 15000);
    EXPECT_LE(ttl, 20000);
    wanted.unlock();
}

TEST_F(RedissonCalls, ATimedLeasedWaitEndsAtItsDeadlineOrItsStop) {
    Client holder_client(config()), waiter_client(config());
    Lock held(holder_client, "door"), wanted(waiter_client, "door");
    held.lock();
    EXPECT_FALSE(wanted.try_lock_for(200ms, 20s, std::stop_token{}));
    std::stop_source stop;
    auto waiting = std::async(std::launch::async, [&] { return wanted.try_lock_for(60s, 20s, stop.get_token()); });
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{door}") == 1; }));
    stop.request_stop();
    ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
    EXPECT_FALSE(waiting.get());
    held.unlock();
    EXPECT_TRUE(wanted.try_lock_for(1s, 20s, std::stop_token{}));
    EXPECT_GT(raw->integer({"PTTL", "door"}), 15000);
    wanted.unlock();
}

TEST_F(RedissonCalls, QueriesAboutAnyOwner) {
    Client client(config()), other(config());
    Lock lock(client, "door");
    const std::string owner = client.new_owner();
    EXPECT_FALSE(lock.is_held_by(owner));
    EXPECT_EQ(lock.hold_count(owner), 0);
    ASSERT_TRUE(lock.async_try_lock(owner).get());
    ASSERT_TRUE(lock.async_try_lock(owner).get());
    EXPECT_TRUE(lock.is_held_by(owner));
    EXPECT_EQ(lock.hold_count(owner), 2);
    EXPECT_FALSE(lock.is_held_by_current_thread());  // the thread is another owner
    // Another client sees the same owner's holds.
    Lock seen(other, "door");
    EXPECT_EQ(seen.hold_count(owner), 2);
    EXPECT_FALSE(seen.is_held_by(other.current_owner()));
    lock.async_release(owner).get();
    lock.async_release(owner).get();
    EXPECT_FALSE(seen.is_held_by(owner));
}

TEST_F(RedissonCalls, AQueryOfAKeyOfAnotherTypeNamesIt) {
    Client client(config());
    raw->command({"SET", "word", "x"});
    Lock lock(client, "word");
    EXPECT_THROW(lock.hold_count("someone"), WrongTypeError);
    EXPECT_THROW(lock.async_hold_count("someone").get(), WrongTypeError);
    EXPECT_EQ(raw->string({"GET", "word"}), "x");
}

TEST_F(RedissonCalls, ExtendingAnExplicitLeaseMovesBothDeadlines) {
    Client client(config());
    Lock lock(client, "door");
    lock.lock(1500ms);
    std::atomic<bool> lost = false;
    std::stop_callback told(lock.lease_lost_token(), [&] { lost = true; });
    ASSERT_TRUE(lock.extend_lease(20s));
    const long long ttl = raw->integer({"PTTL", "door"});
    EXPECT_GT(ttl, 15000);
    EXPECT_LE(ttl, 20000);
    // The local deadline moved too: past the first lease the holder is not
    // told its hold is lost (waited for by the key's old expiry, had it kept it).
    std::this_thread::sleep_for(2500ms);
    EXPECT_FALSE(lost);
    EXPECT_TRUE(lock.is_held_by_current_thread());
    EXPECT_EQ(raw->integer({"EXISTS", "door"}), 1);
    lock.unlock();
    EXPECT_FALSE(lost);
}

TEST_F(RedissonCalls, ExtendingAHoldNotHeldChangesNothing) {
    Client client(config()), other(config());
    Lock lock(client, "door"), theirs(other, "door");
    EXPECT_FALSE(lock.extend_lease(20s));
    EXPECT_EQ(raw->integer({"EXISTS", "door"}), 0);
    theirs.lock(5s);
    EXPECT_FALSE(lock.extend_lease(20s));
    EXPECT_LE(raw->integer({"PTTL", "door"}), 5000);
    EXPECT_FALSE(lock.async_extend_lease(client.new_owner(), 20s).get());
    EXPECT_THROW(lock.extend_lease(0ms), std::invalid_argument);
    theirs.unlock();
}

TEST_F(RedissonCalls, AWatchdogHoldIsNeverCutBelowTheWatchdogLease) {
    Config c = config();
    c.lock_watchdog_timeout = 6s;
    Client client(c);
    Lock lock(client, "door");
    lock.lock();
    ASSERT_TRUE(lock.extend_lease(1ms));
    EXPECT_GT(raw->integer({"PTTL", "door"}), 5000);
    EXPECT_TRUE(detail::core_of(client).watchdog.renews("door", client.current_owner()));
    ASSERT_TRUE(lock.extend_lease(60s));
    EXPECT_GT(raw->integer({"PTTL", "door"}), 55000);
    lock.unlock();
}

TEST_F(RedissonCalls, QueriesAndForceUnlockWithoutBlocking) {
    Client client(config()), other(config());
    Lock lock(client, "door"), theirs(other, "door");
    EXPECT_FALSE(lock.async_is_locked().get());
    EXPECT_EQ(lock.async_remaining_ttl().get(), std::nullopt);
    EXPECT_TRUE(lock.async_holders().get().empty());
    theirs.lock(20s);
    EXPECT_TRUE(lock.async_is_locked().get());
    const auto ttl = lock.async_remaining_ttl().get();
    ASSERT_TRUE(ttl);
    EXPECT_GT(*ttl, 15s);
    const auto holders = lock.async_holders().get();
    ASSERT_EQ(holders.size(), 1u);
    EXPECT_EQ(holders[0].owner, other.current_owner());
    EXPECT_EQ(lock.async_hold_count(other.current_owner()).get(), 1);
    EXPECT_TRUE(lock.async_force_unlock().get());
    EXPECT_FALSE(lock.async_force_unlock().get());
    EXPECT_EQ(raw->integer({"EXISTS", "door"}), 0);
}

TEST_F(RedissonCalls, CallbackQueriesRunOnTheLoopWithoutBlockingIt) {
    Client client(config());
    Lock lock(client, "door");
    lock.lock();
    std::promise<std::int64_t> count;
    const std::string owner = client.current_owner();
    // From the loop thread (a completion), where blocking queries throw.
    lock.async_is_locked([&](std::exception_ptr error, bool locked) {
        ASSERT_FALSE(error);
        ASSERT_TRUE(locked);
        EXPECT_THROW(lock.hold_count(), std::logic_error);
        lock.async_hold_count(owner, [&](std::exception_ptr e, std::int64_t n) {
            if (e) count.set_exception(e);
            else count.set_value(n);
        });
    });
    EXPECT_EQ(count.get_future().get(), 1);
    lock.unlock();
}

}  // namespace
}  // namespace holdfast::testing
