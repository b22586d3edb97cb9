// Releasing a fair lock where a command may be refused: a user without the
// right to PUBLISH, a full server (maxmemory, noeviction), and a lock whose
// lease already ran out.
#include <future>

#include "redis_fixture.hpp"
#include "redisson_fair_lock.hpp"

namespace holdfast::testing {
namespace {

bool says(const std::exception& e, const std::string& what) {
    return std::string(e.what()).find(what) != std::string::npos;
}

class FairRelease : public RedisTest {
protected:
    std::vector<std::string> server_args() override { return {"--maxmemory-policy", "noeviction"}; }

    /// Full for good: 2 MiB written, then maxmemory lowered to 1 MiB.
    void fill() {
        for (int i = 0; i < 32; ++i)
            raw->command({"SET", "filler:" + std::to_string(i), std::string(64 * 1024, 'x')});
        raw->command({"CONFIG", "SET", "maxmemory", "1mb"});
        auto refused = raw->command({"SET", "probe", "x"});
        ASSERT_EQ(refused->type, REDIS_REPLY_ERROR) << "the server is not full";
    }

    long long queue_length() { return raw->integer({"LLEN", "redisson_lock_queue:{line}"}); }
};

// The release must not delete the lock and then fail on PUBLISH: the caller
// would be told of a failure while the lock is free and its waiter asleep.
TEST_F(FairRelease, AHolderThatMayNotPublishIsToldAndKeepsTheLock) {
    // Allowed to publish when it locks (the acquire checks), not when it unlocks.
    raw->command({"ACL", "SETUSER", "nopublish", "on", ">pw", "~*", "+@all", "allchannels"});
    Config limited = config();
    limited.username = "nopublish";
    limited.password = "pw";
    Client holder_client(limited), waiter_client(config());
    FairLock held(holder_client, "line"), wanted(waiter_client, "line");
    held.lock();
    const std::string holder = holder_client.current_owner(), waiter = waiter_client.new_owner();
    auto waiting = wanted.async_try_lock(waiter, std::chrono::seconds(60));
    ASSERT_TRUE(eventually([&] { return queue_length() == 1; }));
    const std::string deadline = raw->string({"ZSCORE", "redisson_lock_timeout:{line}", waiter});
    raw->command({"ACL", "SETUSER", "nopublish", "resetchannels"});

    try {
        held.release();
        ADD_FAILURE() << "the unlock succeeded although the holder may not publish";
    } catch (const ServerError& e) {
        EXPECT_TRUE(says(e, "'line'")) << e.what();
        EXPECT_TRUE(says(e, "publish")) << e.what();  // Redis 7.0: "can't publish to the channel"
    }
    EXPECT_EQ(raw->string({"HGET", "line", holder}), "1");
    EXPECT_GT(raw->integer({"PTTL", "line"}), 0);
    EXPECT_EQ(queue_length(), 1);
    EXPECT_EQ(raw->string({"ZSCORE", "redisson_lock_timeout:{line}", waiter}), deadline);

    raw->command({"ACL", "SETUSER", "nopublish", "allchannels"});
    held.unlock();
    ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(waiting.get());
    wanted.async_release(waiter).get();
}

// On a full server the holds still go, and a waiter that then cannot take the
// lock is told so and leaves the queue.
TEST_F(FairRelease, AFullServerStillLetsTheLockGoAndTheWaiterLeave) {
    Client holder_client(config()), waiter_client(config());
    FairLock held(holder_client, "line"), wanted(waiter_client, "line");
    held.lock();
    held.lock();  // two holds: the first unlock only counts down
    const std::string waiter = waiter_client.new_owner();
    auto waiting = wanted.async_try_lock(waiter, std::chrono::seconds(60));
    ASSERT_TRUE(eventually([&] { return queue_length() == 1; }));
    fill();

    EXPECT_NO_THROW(held.release());
    EXPECT_EQ(raw->string({"HGET", "line", holder_client.current_owner()}), "1");
    EXPECT_NO_THROW(held.release());
    EXPECT_EQ(raw->integer({"EXISTS", "line"}), 0);
    ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    try {
        waiting.get();
        ADD_FAILURE() << "a full server granted the lock";
    } catch (const ServerError& e) {
        EXPECT_TRUE(says(e, "out of memory")) << e.what();
    }
    EXPECT_TRUE(eventually([&] { return queue_length() == 0; }));
    EXPECT_EQ(raw->integer({"EXISTS", "redisson_lock_timeout:{line}", "holdfast_fair_alive:{line}"}), 0);
}

// As RFairLock's: unlocking a lock whose lease ran out (nobody took it since)
// wakes the first waiter; holdfast's unlock also says the lease was lost.
TEST_F(FairRelease, AnExpiredLockIsReleasedAndItsFirstWaiterWoken) {
    Client client(config());
    FairLock fair(client, "line");
    fair.lock(std::chrono::milliseconds(300));
    RedissonFairLock java(*raw, "line");
    const std::string waiter = "5f1c6a4e-0000-4000-8000-00000000beef:2";
    ASSERT_FALSE(java.try_acquire(waiter));
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", java.channel(waiter)});
    ASSERT_TRUE(eventually([&] { return raw->integer({"EXISTS", "line"}) == 0; }));

    // The unlock says the lease was lost, and still wakes the head as Redisson's does.
    EXPECT_THROW(fair.release(), LeaseLostError);
    auto message = listener.read_reply();
    ASSERT_EQ(message->elements, 3u);
    EXPECT_EQ(std::string(message->element[1]->str), java.channel(waiter));
    EXPECT_TRUE(java.try_acquire(waiter));
}

// A partial unlock raises the TTL to the watchdog lease, never lowers it: the
// hold left, a nested one with a longer explicit lease, keeps its lease (as
// Lock's and the write lock's partial unlocks do).
TEST_F(FairRelease, APartialUnlockKeepsALongerNestedLease) {
    Client client(config());
    FairLock lock(client, "line");
    lock.lock();
    lock.lock(std::chrono::minutes(1));
    lock.unlock();
    EXPECT_GT(raw->integer({"PTTL", "line"}), 50'000);
    lock.unlock();
    EXPECT_EQ(raw->integer({"EXISTS", "line"}), 0);
}

// A key of another type is no lock to force-unlock: refused, and kept, as
// Lock::force_unlock() refuses it (the fair script checked EXISTS, not HLEN).
TEST_F(FairRelease, ForceUnlockRefusesAKeyOfAnotherTypeAndKeepsIt) {
    raw->command({"SET", "line", "x"});
    Client client(config());
    FairLock lock(client, "line");
    EXPECT_THROW(lock.force_unlock(), WrongTypeError);
    EXPECT_EQ(raw->string({"GET", "line"}), "x");
}

// The owner's field holding no hold count: not its lock, as Lock's unlock
// says, instead of a Lua error from the fair script.
TEST_F(FairRelease, AnOwnerFieldThatIsNoCountIsNotAHold) {
    Client client(config());
    FairLock lock(client, "line");
    const std::string owner = client.new_owner();
    raw->command({"HSET", "line", owner, "many"});
    raw->command({"PEXPIRE", "line", "60000"});
    EXPECT_THROW(lock.async_release(owner).get(), NotOwnerError);
    EXPECT_EQ(raw->string({"HGET", "line", owner}), "many");
}

}  // namespace
}  // namespace holdfast::testing
