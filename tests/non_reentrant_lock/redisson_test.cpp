// A Redisson RedissonNonReentrantLock / RedissonNonReentrantFairLock peer
// (tests/lock/redisson_lock.lua, tests/fair_lock/redisson_fair_lock.lua, both
// written from docs/redisson-layout.md) and holdfast share one lock: each side
// waits while the other holds, wakes on the other's unlock, and each refuses
// its own holder's second acquire.
#include <future>

#include "../fair_lock/redisson_fair_lock.hpp"
#include "redis_fixture.hpp"
#include "redisson_peer.hpp"

namespace holdfast::testing {
namespace {

using WithRedisson = RedisTest;

TEST_F(WithRedisson, AJavaHolderKeepsHoldfastWaitingUntilItsUnlockWakesIt) {
    RedissonLockPeer java(*raw, "ledger");
    ASSERT_EQ(java.lock_once()->type, REDIS_REPLY_NIL);
    Client client(config());
    NonReentrantLock lock(client, "ledger");
    EXPECT_FALSE(lock.try_lock());
    auto waiter = take_and_give_back(lock);
    // Asleep on the channel: the Java lease is 30 s, so only the message wakes it in time.
    ASSERT_TRUE(eventually([&] { return subscribers(java.channel()) == 1; }));
    ASSERT_EQ(java.unlock()->integer, 1);
    ASSERT_EQ(waiter.wait_for(5s), std::future_status::ready);
    EXPECT_TRUE(waiter.get());
}

TEST_F(WithRedisson, AHoldfastHolderKeepsJavaOutAndItsUnlockWakesJavaWaiters) {
    Client client(config());
    NonReentrantLock lock(client, "ledger");
    lock.lock();
    EXPECT_EQ(raw->string({"HGET", "ledger", client.current_owner()}), "1");  // RLock's hash
    RedissonLockPeer java(*raw, "ledger");
    auto refused = java.lock_once();
    ASSERT_EQ(refused->type, REDIS_REPLY_INTEGER);  // the PTTL Redisson waits on
    EXPECT_GT(refused->integer, 0);
    EXPECT_EQ(java.unlock()->type, REDIS_REPLY_NIL);  // not Java's to unlock
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", java.channel()});
    lock.unlock();
    auto message = listener.read_reply();
    ASSERT_EQ(message->elements, 3u);
    EXPECT_EQ(std::string(message->element[2]->str), "0");  // what Redisson's LockPubSub wakes one waiter on
    EXPECT_EQ(java.lock_once()->type, REDIS_REPLY_NIL);
    ASSERT_EQ(java.unlock()->integer, 1);
}

// Both refuse the same thing: an owner's second hold, with the same error.
TEST_F(WithRedisson, BothSidesRefuseTheirHoldersSecondAcquire) {
    RedissonLockPeer java(*raw, "ledger");
    ASSERT_EQ(java.lock_once()->type, REDIS_REPLY_NIL);
    auto again = java.lock_once();
    ASSERT_EQ(again->type, REDIS_REPLY_ERROR);
    // Redis 7 prefixes a one-word error with ERR; Redisson looks for the word.
    EXPECT_NE(std::string(again->str).find("NON_REENTRANT_REACQUIRE"), std::string::npos) << again->str;
    ASSERT_EQ(java.unlock()->integer, 1);

    Client client(config());
    NonReentrantLock lock(client, "ledger");
    lock.lock();
    EXPECT_THROW(lock.lock(), DeadlockError);
    // holdfast's script answers a Java owner's second acquire as Redisson's does.
    auto script = raw->command({"EVALSHA", scripts::non_reentrant_lock_acquire.sha1, "1", "ledger", "30000",
                                client.current_owner(), "redisson_lock__channel:{ledger}", "publish"});
    if (script->type == REDIS_REPLY_ERROR && std::string(script->str).starts_with("NOSCRIPT"))
        script = raw->command({"EVAL", scripts::non_reentrant_lock_acquire.body, "1", "ledger", "30000",
                               client.current_owner(), "redisson_lock__channel:{ledger}", "publish"});
    ASSERT_EQ(script->type, REDIS_REPLY_ERROR);
    EXPECT_TRUE(std::string(script->str).starts_with("NON_REENTRANT_REACQUIRE")) << script->str;
    lock.unlock();
}

// A Redisson RLock holder's re-entry is its own business; a holdfast
// non-reentrant waiter still waits for its last unlock.
TEST_F(WithRedisson, AJavaRLockHolderReenteringKeepsTheNonReentrantWaiterOut) {
    RedissonLockPeer java(*raw, "ledger");
    ASSERT_EQ(java.lock()->type, REDIS_REPLY_NIL);
    ASSERT_EQ(java.lock()->type, REDIS_REPLY_NIL);
    Client client(config());
    NonReentrantLock lock(client, "ledger");
    auto waiter = take_and_give_back(lock);
    ASSERT_TRUE(eventually([&] { return subscribers(java.channel()) == 1; }));
    ASSERT_EQ(java.unlock()->integer, 0);
    EXPECT_EQ(waiter.wait_for(300ms), std::future_status::timeout);
    ASSERT_EQ(java.unlock()->integer, 1);
    ASSERT_EQ(waiter.wait_for(5s), std::future_status::ready);
    EXPECT_TRUE(waiter.get());
}

TEST_F(WithRedisson, TheFairOnesShareOneQueueAndRefuseTheSameReentry) {
    RedissonFairLock java(*raw, "line");
    ASSERT_EQ(java.acquire_once(java_owner)->type, REDIS_REPLY_NIL);
    auto again = java.acquire_once(java_owner);
    ASSERT_EQ(again->type, REDIS_REPLY_ERROR);
    // Redis 7 prefixes a one-word error with ERR; Redisson looks for the word.
    EXPECT_NE(std::string(again->str).find("NON_REENTRANT_REACQUIRE"), std::string::npos) << again->str;

    Client client(config());
    NonReentrantFairLock lock(client, "line", std::chrono::minutes(2));
    const std::string mine = client.new_owner();
    // Retries every 30 s (a quarter of 2 minutes): served within 10 s only by its message.
    auto waiting = lock.async_try_lock(mine, 60s);
    ASSERT_TRUE(eventually([&] { return raw->integer({"LLEN", "redisson_lock_queue:{line}"}) == 1; }));
    EXPECT_EQ(java.release(java_owner), 1);  // wakes the head: holdfast's waiter
    ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(waiting.get());
    EXPECT_THROW(lock.async_try_lock(mine).get(), DeadlockError);
    // Java waits behind holdfast's hold, in the queue, and gets it at its unlock.
    auto java_wait = java.acquire_once("java-2:1");
    ASSERT_EQ(java_wait->type, REDIS_REPLY_INTEGER);
    lock.async_release(mine).get();
    EXPECT_EQ(java.acquire_once("java-2:1")->type, REDIS_REPLY_NIL);
    EXPECT_EQ(java.release("java-2:1"), 1);
}

}  // namespace
}  // namespace holdfast::testing
