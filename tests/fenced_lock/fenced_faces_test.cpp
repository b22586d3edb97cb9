// FencedLock: token() as a future and a callback, lock_and_get_token() with a
// stop token, and try_lock_and_get_token() with a deadline.
#include <future>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using FencedFaces = RedisTest;

TEST_F(FencedFaces, TheTokenHasAsyncForms) {
    Client client(config());
    FencedLock lock(client, "fence");
    EXPECT_EQ(lock.async_token().get(), 0);
    const std::int64_t token = lock.lock_and_get_token();
    EXPECT_EQ(lock.async_token().get(), token);
    Delivered<std::int64_t> read;
    lock.async_token(read.done());
    EXPECT_EQ(read.value(), token);
    lock.unlock();
    raw->command({"SET", "redisson_lock_token:{fence}", "not a number"});
    EXPECT_THROW(lock.async_token().get(), WrongTypeError);
}

TEST_F(FencedFaces, AStopTokenEndsTheWaitForAToken) {
    Client holder_client(config()), client(config());
    FencedLock held(holder_client, "fence"), wanted(client, "fence");
    held.lock();
    auto stopped = [&](std::function<std::optional<std::int64_t>(std::stop_token)> wait) {
        expect_stop_ends("redisson_lock__channel:{fence}", [&](std::stop_token s) { return wait(s).has_value(); });
    };
    const auto far = std::chrono::steady_clock::now() + 60s;
    stopped([&](std::stop_token s) { return wanted.lock_and_get_token(s); });
    stopped([&](std::stop_token s) { return wanted.lock_and_get_token(5s, s); });
    stopped([&](std::stop_token s) { return wanted.try_lock_and_get_token(far, s); });
    stopped([&](std::stop_token s) { return wanted.try_lock_and_get_token(far, 5s, s); });
    EXPECT_EQ(held.holders().size(), 1u);
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
    EXPECT_FALSE(wanted.try_lock_and_get_token(std::chrono::system_clock::now() - 1s));
    const std::int64_t before = held.token();
    held.unlock();
    const auto taken = wanted.try_lock_and_get_token(far, 3s);
    ASSERT_TRUE(taken);
    EXPECT_GT(*taken, before);
    EXPECT_LE(raw->integer({"PTTL", "fence"}), 3000);
    wanted.unlock();
    const auto again = wanted.lock_and_get_token(std::stop_token());
    ASSERT_TRUE(again);
    EXPECT_GT(*again, *taken);
    wanted.unlock();
}

}  // namespace
}  // namespace holdfast::testing
