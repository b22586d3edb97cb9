// Lock::try_lock_until takes what try_lock_for takes: a lease, a stop token,
// or both (detail::TimedTries), and so does LockGroup.
#include <future>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using LockUntil = RedisTest;

TEST_F(LockUntil, ADeadlineWithALeaseHoldsForTheLeaseUnrenewed) {
    Client client(config());
    Lock lock(client, "door");
    ASSERT_TRUE(lock.try_lock_until(std::chrono::system_clock::now() + 1s, std::chrono::seconds(5)));
    const long long pttl = raw->integer({"PTTL", "door"});
    EXPECT_GT(pttl, 4000);
    EXPECT_LE(pttl, 5000);
    EXPECT_EQ(detail::core_of(client).watchdog.renews("door", client.current_owner()), false);
    lock.unlock();
    ASSERT_TRUE(lock.try_lock_until(std::chrono::steady_clock::now() + 1s, 5s, std::stop_token()));
    EXPECT_LE(raw->integer({"PTTL", "door"}), 5000);
    lock.unlock();
}

TEST_F(LockUntil, AStopTokenEndsADeadlineWait) {
    Client holder_client(config()), client(config());
    Lock held(holder_client, "door"), wanted(client, "door");
    MultiLock group(wanted);
    held.lock();
    const auto far = std::chrono::steady_clock::now() + 60s;
    auto stopped = [&](std::function<bool(std::stop_token)> wait) {
        expect_stop_ends("redisson_lock__channel:{door}", wait);
    };
    stopped([&](std::stop_token s) { return wanted.try_lock_until(far, s); });
    stopped([&](std::stop_token s) { return wanted.try_lock_until(far, 5s, s); });
    stopped([&](std::stop_token s) { return group.try_lock_until(far, s); });
    stopped([&](std::stop_token s) { return group.try_lock_until(far, 5s, s); });
    EXPECT_EQ(held.holders().size(), 1u);
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
    held.unlock();
    // Unstopped, the deadline form with a lease takes it.
    ASSERT_TRUE(group.try_lock_until(far, 3s));
    EXPECT_LE(raw->integer({"PTTL", "door"}), 3000);
    group.unlock();
}

}  // namespace
}  // namespace holdfast::testing
