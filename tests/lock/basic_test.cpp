// The RLock's API: reentrancy, queries, owners, std lock adaptors, bad input.
#include <future>
#include <mutex>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using LockBasics = RedisTest;

TEST_F(LockBasics, ReentrantHoldCountIsVisibleInRedis) {
    Client client(config());
    Lock lock(client, "orders");
    lock.lock();
    lock.lock();
    EXPECT_EQ(lock.hold_count(), 2);
    EXPECT_EQ(raw->string({"HGET", "orders", client.current_owner()}), "2");
    lock.unlock();
    EXPECT_EQ(raw->string({"HGET", "orders", client.current_owner()}), "1");
    EXPECT_TRUE(lock.is_locked());
    lock.unlock();
    EXPECT_EQ(raw->integer({"EXISTS", "orders"}), 0);
    EXPECT_FALSE(lock.is_locked());
    EXPECT_EQ(lock.hold_count(), 0);
}

TEST_F(LockBasics, QueriesDescribeTheHold) {
    Client client(config());
    Lock lock(client, "report");
    EXPECT_EQ(lock.remaining_ttl(), std::nullopt);
    EXPECT_TRUE(lock.holders().empty());
    lock.lock(std::chrono::seconds(20));
    EXPECT_TRUE(lock.is_held_by_current_thread());
    auto ttl = lock.remaining_ttl();
    ASSERT_TRUE(ttl);
    EXPECT_GT(*ttl, std::chrono::seconds(15));
    EXPECT_LE(*ttl, std::chrono::seconds(20));
    auto holders = lock.holders();
    ASSERT_EQ(holders.size(), 1u);
    EXPECT_EQ(holders[0].owner, client.current_owner());
    EXPECT_EQ(holders[0].hold_count, 1);
    std::async(std::launch::async, [&] {
        EXPECT_FALSE(lock.is_held_by_current_thread());
        EXPECT_FALSE(lock.try_lock());
    }).get();
    lock.unlock();
}

TEST_F(LockBasics, OwnerIdsFollowTheLayout) {
    Client client(config());
    // A version 4 UUID as Java prints it: 8-4-4-4-12 lowercase hex.
    const std::string& id = client.id();
    ASSERT_EQ(id.size(), 36u) << id;
    for (std::size_t i = 0; i < id.size(); ++i) {
        if (i == 8 || i == 13 || i == 18 || i == 23) EXPECT_EQ(id[i], '-') << id;
        else EXPECT_NE(std::string_view("0123456789abcdef").find(id[i]), std::string_view::npos) << id;
    }
    EXPECT_EQ(id[14], '4') << id;
    EXPECT_NE(std::string_view("89ab").find(id[19]), std::string_view::npos) << id;
    const std::string owner = client.current_owner();
    ASSERT_TRUE(owner.starts_with(id + ":")) << owner;
    EXPECT_EQ(owner.find_first_not_of("0123456789", id.size() + 1), std::string::npos) << owner;
    const auto a = client.new_owner(), b = client.new_owner();
    EXPECT_NE(a, b);
    EXPECT_NE(a, client.current_owner());
    EXPECT_NE(Client(config()).id(), client.id());
}

TEST_F(LockBasics, UnlockByNonOwnerThrowsNotOwnerError) {
    Client client(config());
    Lock lock(client, "guarded");
    try {
        lock.release();
        FAIL() << "unlock without lock succeeded";
    } catch (const NotOwnerError& e) {
        EXPECT_NE(std::string(e.what()).find("'guarded'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(client.current_owner()), std::string::npos) << e.what();
    }
    lock.lock();
    std::async(std::launch::async, [&] { EXPECT_THROW(lock.release(), NotOwnerError); }).get();
    EXPECT_TRUE(lock.is_held_by_current_thread());
    lock.unlock();
    EXPECT_THROW(lock.release(), NotOwnerError);
}

TEST_F(LockBasics, BadArgumentsAreRejected) {
    Client client(config());
    EXPECT_THROW(Lock(client, ""), std::invalid_argument);
    Lock lock(client, "args");
    EXPECT_THROW(lock.lock(std::chrono::milliseconds(0)), std::invalid_argument);
    EXPECT_THROW(lock.lock(std::chrono::milliseconds(-5)), std::invalid_argument);
    EXPECT_THROW(lock.try_lock_for(std::chrono::milliseconds(-1)), std::invalid_argument);
    EXPECT_THROW(lock.try_lock_for(std::chrono::milliseconds(10), std::chrono::milliseconds(0)),
                 std::invalid_argument);
    EXPECT_THROW(lock.async_try_lock(client.new_owner(), std::chrono::milliseconds(-1)), std::invalid_argument);
    EXPECT_EQ(raw->integer({"EXISTS", "args"}), 0);
}

TEST_F(LockBasics, WrongTypeKeyIsNamedAndLeavesNothingBehind) {
    Client client(config());
    raw->command({"SET", "taken", "a string"});
    Lock lock(client, "taken");
    try {
        lock.try_lock_for(std::chrono::milliseconds(200));
        FAIL() << "locked a string key";
    } catch (const WrongTypeError& e) {
        EXPECT_NE(std::string(e.what()).find("'taken'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("string"), std::string::npos) << e.what();
    }
    EXPECT_THROW(lock.lock(), WrongTypeError);
    EXPECT_THROW(lock.release(), WrongTypeError);
    EXPECT_THROW(lock.hold_count(), WrongTypeError);
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
    EXPECT_EQ(raw->string({"GET", "taken"}), "a string");
}

TEST_F(LockBasics, StdUniqueLockAndScopedLock) {
    Client client(config());
    Lock a(client, "a"), b(client, "b");
    {
        std::unique_lock guard(a, std::chrono::seconds(1));  // try_lock_for
        ASSERT_TRUE(guard.owns_lock());
        EXPECT_TRUE(a.is_held_by_current_thread());
    }
    EXPECT_FALSE(a.is_locked());
    {
        std::unique_lock guard(a, std::try_to_lock);
        EXPECT_TRUE(guard.owns_lock());
        std::unique_lock until(b, std::chrono::steady_clock::now() + std::chrono::seconds(1));
        EXPECT_TRUE(until.owns_lock());
    }
    {
        std::scoped_lock both(a, b);
        EXPECT_TRUE(a.is_held_by_current_thread());
        EXPECT_TRUE(b.is_held_by_current_thread());
    }
    EXPECT_FALSE(a.is_locked());
    EXPECT_FALSE(b.is_locked());
}

TEST_F(LockBasics, AsyncOwnerUnlocksFromAnotherThread) {
    Client client(config());
    Lock lock(client, "job");
    const std::string owner = client.new_owner();
    lock.async_lock(owner).get();
    EXPECT_EQ(raw->string({"HGET", "job", owner}), "1");
    EXPECT_FALSE(lock.async_try_lock(client.new_owner()).get());
    std::async(std::launch::async, [&] { lock.async_release(owner).get(); }).get();
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);
    EXPECT_THROW(lock.async_release(owner).get(), NotOwnerError);
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
}

TEST_F(LockBasics, ForceUnlockDeletesWhoeverHolds) {
    Client client(config());
    Lock lock(client, "stuck");
    EXPECT_FALSE(lock.force_unlock());
    lock.lock();
    Client other(config());
    EXPECT_TRUE(Lock(other, "stuck").force_unlock());
    EXPECT_EQ(raw->integer({"EXISTS", "stuck"}), 0);
}

TEST_F(LockBasics, AHashThatIsNotALockIsNamed) {
    Client client(config());
    raw->command({"HSET", "profile", "name", "ada"});
    Lock lock(client, "profile");
    try {
        lock.holders();
        FAIL() << "read a profile hash as lock holders";
    } catch (const WrongTypeError& e) {
        EXPECT_NE(std::string(e.what()).find("'profile'"), std::string::npos) << e.what();
    }
    EXPECT_EQ(raw->string({"HGET", "profile", "name"}), "ada");
}

// A refusal without a TTL is checked before a wait: a hash of something else
// fails at once (a 30 s wait would otherwise sleep on a key nothing releases),
// while a holder's count without a TTL stays a refusal.
TEST_F(LockBasics, AWaitOnAHashWithoutATtlChecksItIsALock) {
    Client client(config());
    raw->command({"HSET", "profile", "name", "ada"});
    Lock profile(client, "profile");
    const auto started = std::chrono::steady_clock::now();
    try {
        profile.try_lock_for(std::chrono::seconds(30));
        FAIL() << "waited on a profile hash as a lock";
    } catch (const WrongTypeError& e) {
        EXPECT_NE(std::string(e.what()).find("'profile'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("not a lock"), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20)) << "slept on it";
    raw->command({"HSET", "kept", "someone:1", "1"});  // a hold whose TTL a hand removed
    Lock kept(client, "kept");
    EXPECT_FALSE(kept.try_lock_for(std::chrono::milliseconds(200)));
    EXPECT_EQ(raw->string({"HGET", "kept", "someone:1"}), "1");
}

}  // namespace
}  // namespace holdfast::testing
