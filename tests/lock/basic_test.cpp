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
    lock.unlock();
    EXPECT_EQ(raw->integer({"EXISTS", "orders"}), 0);
    EXPECT_FALSE(lock.is_locked());
}

}  // namespace
}  // namespace holdfast::testing
