// CountDownLatch: count() and try_set_count() as futures and callbacks, and
// await_until() with a stop token.
#include <future>

#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using LatchFaces = RedisTest;

TEST_F(LatchFaces, CountAndTrySetCountHaveAsyncForms) {
    Client client(config());
    CountDownLatch gate(client, "gate");
    EXPECT_EQ(gate.async_count().get(), 0);
    EXPECT_TRUE(gate.async_try_set_count(3).get());
    EXPECT_FALSE(gate.async_try_set_count(9).get());
    EXPECT_EQ(gate.async_count().get(), 3);
    gate.count_down();
    Delivered<std::int64_t> count;
    gate.async_count(count.done());
    EXPECT_EQ(count.value(), 2);
    Delivered<bool> set;
    CountDownLatch(client, "other").async_try_set_count(1, set.done());
    EXPECT_TRUE(set.value());
    EXPECT_EQ(raw->string({"GET", "other"}), "1");

    raw->command({"SET", "word", "many"});
    CountDownLatch word(client, "word");
    EXPECT_THROW(word.async_count().get(), WrongTypeError);
    EXPECT_THROW(word.async_try_set_count(1).get(), WrongTypeError);
    expect_invalid_argument([&] { gate.async_try_set_count(0); }, "count must be > 0");
}

TEST_F(LatchFaces, AStopTokenEndsADeadlineWait) {
    Client client(config());
    CountDownLatch gate(client, "gate");
    ASSERT_TRUE(gate.try_set_count(1));
    expect_stop_ends("redisson_countdownlatch__channel__{gate}", [&](std::stop_token stop) {
        return gate.await_until(std::chrono::steady_clock::now() + 60s, stop);
    });
    gate.count_down();
    EXPECT_TRUE(gate.await_until(std::chrono::system_clock::now() + 1s, std::stop_token()));
}

}  // namespace
}  // namespace holdfast::testing
