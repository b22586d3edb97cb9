// LockGroup::is_held_by(): the servers' word, by the group's rule (MultiLock:
// every lock), blocking, as a future and as a callback.
#include <future>

#include "redis_fixture.hpp"
#include "tcp_proxy.hpp"

namespace holdfast::testing {
namespace {

using GroupHeld = RedisTest;

TEST_F(GroupHeld, AMultiLockIsHeldWhenEveryLockIs) {
    Client client(config());
    Lock a(client, "a"), b(client, "b");
    MultiLock both(a, b);
    const std::string owner = client.new_owner();
    EXPECT_FALSE(both.is_held_by_current_thread());
    EXPECT_FALSE(both.async_is_held_by(owner).get());
    both.lock();
    EXPECT_TRUE(both.is_held_by_current_thread());
    EXPECT_FALSE(both.is_held_by(owner));
    both.unlock();

    ASSERT_TRUE(both.async_try_lock(owner, 5s).get());
    EXPECT_TRUE(both.async_is_held_by(owner).get());
    Delivered<bool> held;
    both.async_is_held_by(owner, held.done());
    EXPECT_TRUE(held.value());
    // One member gone (force-unlocked): the group is no longer held.
    b.force_unlock();
    EXPECT_FALSE(both.is_held_by(owner));
    both.async_release(owner).wait();
    expect_invalid_argument([&] { both.is_held_by(""); }, "owner");
}

// A member's server that cannot answer: the others' answers decide when they can.
TEST_F(GroupHeld, AnUnreachableMemberDecidesOnlyWhenTheOthersCannot) {
    support::TcpProxy proxy(server->port());
    Config through = config();
    through.port = proxy.port();
    through.timeout = 500ms;
    Client client(config()), far(through);
    Lock a(client, "a"), b(far, "b");
    MultiLock both(a, b);
    const std::string owner = client.new_owner();
    proxy.freeze();
    // a not held: whatever b says, the group is not.
    EXPECT_FALSE(both.is_held_by(owner));
    // a held: only b could say, and it cannot.
    ASSERT_TRUE(a.async_try_lock(owner).get());
    EXPECT_THROW(both.is_held_by(owner), ConnectionError);
    proxy.heal();
    a.async_release(owner).get();
}

}  // namespace
}  // namespace holdfast::testing
