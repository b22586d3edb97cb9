// NonReentrantLock and NonReentrantFairLock: a second acquire by the holder
// fails with DeadlockError in every face, and takes or changes nothing;
// other owners wait and are woken as on Lock and FairLock.
#include "holdfast/asio.hpp"

#include <asio/use_future.hpp>

#include <future>
#include <system_error>
#include <thread>

#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using NonReentrant = RedisTest;

// `call` fails as a second hold must: DeadlockError, code resource_deadlock_would_occur.
void expect_refused_reentry(const std::function<void()>& call) {
    try {
        call();
        ADD_FAILURE() << "a second acquire by the holder did not throw";
    } catch (const DeadlockError& e) {
        EXPECT_EQ(e.code(), std::errc::resource_deadlock_would_occur);
        EXPECT_NE(std::string(e.what()).find("not reentrant"), std::string::npos) << e.what();
    }
}

TEST_F(NonReentrant, EveryAcquireByTheHolderIsRefusedAndChangesNothing) {
    Client client(config());
    NonReentrantLock lock(client, "ledger");
    lock.lock();
    const std::string owner = client.current_owner();
    expect_refused_reentry([&] { lock.lock(); });
    expect_refused_reentry([&] { lock.try_lock(); });
    expect_refused_reentry([&] { lock.try_lock_for(5s); });
    expect_refused_reentry([&] { lock.try_lock_for(5s, 10s); });
    expect_refused_reentry([&] { lock.lock(std::chrono::seconds(10)); });
    expect_refused_reentry([&] { lock.try_lock_until(std::chrono::steady_clock::now() + 5s); });
    std::stop_source stop;
    expect_refused_reentry([&] { lock.lock(stop.get_token()); });
    EXPECT_EQ(raw->string({"HGET", "ledger", owner}), "1");
    EXPECT_EQ(lock.hold_count(), 1);
    EXPECT_GT(raw->integer({"PTTL", "ledger"}), 25000);  // still the watchdog's lease
    lock.unlock();
    EXPECT_EQ(raw->integer({"EXISTS", "ledger"}), 0);
    // Taken again once given back.
    EXPECT_TRUE(lock.try_lock());
    lock.unlock();
}

TEST_F(NonReentrant, AsyncFormsAndAsioCompleteWithTheDeadlock) {
    Client client(config());
    NonReentrantLock lock(client, "ledger");
    const std::string owner = client.new_owner();
    ASSERT_TRUE(lock.async_lock(owner).get());
    expect_refused_reentry([&] { lock.async_lock(owner).get(); });
    expect_refused_reentry([&] { lock.async_try_lock(owner, 1s).get(); });
    std::promise<std::exception_ptr> called;
    lock.async_try_lock(owner, Lock::Duration::zero(), std::nullopt, {},
                        [&](std::exception_ptr error, bool) { called.set_value(error); });
    expect_refused_reentry([&] { std::rethrow_exception(called.get_future().get()); });
    auto taken = async_try_lock(lock, owner, Lock::Duration(1000), asio::use_future);
    expect_refused_reentry([&] { taken.get(); });
    auto coded = async_try_lock(lock, owner, Lock::Duration(0), with_error_code(asio::use_future));
    try {
        coded.get();
        ADD_FAILURE() << "an error_code completion with an error should throw from use_future";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), std::errc::resource_deadlock_would_occur);
    }
    EXPECT_EQ(lock.hold_count(owner), 1);
    lock.async_release(owner).get();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(NonReentrant, OtherOwnersWaitAndAreWokenByTheUnlock) {
    Client client(config());
    NonReentrantLock lock(client, "ledger");
    const std::string first = client.new_owner(), second = client.new_owner();
    ASSERT_TRUE(lock.async_try_lock(first).get());
    EXPECT_FALSE(lock.async_try_lock(second).get());
    auto waiting = lock.async_try_lock(second, 60s);
    // Asleep on the channel: the lease is 30 s, so only the unlock's message wakes it in time.
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{ledger}") == 1; }));
    lock.async_release(first).get();
    ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(waiting.get());
    EXPECT_EQ(lock.hold_count(second), 1);
    lock.async_release(second).get();
}

TEST_F(NonReentrant, TheWatchdogRenewsAndTheLeaseLostTokenWatches) {
    Config c = config();
    c.lock_watchdog_timeout = std::chrono::milliseconds(1500);
    Client client(c);
    NonReentrantLock lock(client, "ledger");
    lock.lock();
    std::stop_token lost = lock.lease_lost_token();
    ASSERT_TRUE(lost.stop_possible());
    std::this_thread::sleep_for(3s);  // two leases: held only if renewed
    EXPECT_TRUE(lock.is_held_by_current_thread());
    EXPECT_FALSE(lost.stop_requested());
    raw->command({"DEL", "ledger"});
    EXPECT_TRUE(eventually([&] { return lost.stop_requested(); }));
    EXPECT_THROW(lock.release(), NotOwnerError);
}

// The fair kind: the holder's second acquire is refused before it could
// join the queue; others queue and are served in order.
TEST_F(NonReentrant, TheFairOneRefusesItsHolderAndQueuesTheOthers) {
    Client client(config());
    NonReentrantFairLock lock(client, "line");
    const std::string first = client.new_owner(), second = client.new_owner();
    ASSERT_TRUE(lock.async_try_lock(first).get());
    expect_refused_reentry([&] { lock.async_try_lock(first, 5s).get(); });
    expect_refused_reentry([&] { lock.async_try_lock(first).get(); });
    EXPECT_EQ(raw->integer({"EXISTS", "redisson_lock_queue:{line}"}), 0);  // it joined no queue
    auto waiting = lock.async_try_lock(second, 60s);
    ASSERT_TRUE(eventually([&] { return raw->integer({"LLEN", "redisson_lock_queue:{line}"}) == 1; }));
    lock.async_release(first).get();
    ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(waiting.get());
    expect_refused_reentry([&] { lock.async_lock(second).get(); });
    lock.async_release(second).get();
    EXPECT_EQ(raw->integer({"EXISTS", "line"}), 0);
}

// The metrics count the new kinds under their own names.
TEST_F(NonReentrant, MetricsNameTheKinds) {
    Client client(config());
    NonReentrantLock lock(client, "ledger");
    NonReentrantFairLock fair(client, "line");
    lock.lock();
    lock.unlock();
    fair.lock();
    fair.unlock();
    const Metrics metrics = client.metrics();
    EXPECT_EQ(metrics.primitives.at("non_reentrant_lock").acquired, 1u);
    EXPECT_EQ(metrics.primitives.at("non_reentrant_fair_lock").acquired, 1u);
}

}  // namespace
}  // namespace holdfast::testing
