// holdfast::Semaphore's faces beside the blocking ones: every call that talks
// to Redis as a future and a callback, the stop-token overloads of every
// wait, a count with a time to live and release_if_exists().
#include <future>

#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using SemaphoreFaces = RedisTest;

TEST_F(SemaphoreFaces, EveryCallHasAFutureAndACallbackForm) {
    Client client(config());
    Semaphore pool(client, "pool");
    EXPECT_TRUE(pool.async_try_set_permits(2).get());
    EXPECT_FALSE(pool.async_try_set_permits(7).get());
    EXPECT_EQ(pool.async_available_permits().get(), 2);
    pool.async_add_permits(3).get();
    EXPECT_EQ(raw->string({"GET", "pool"}), "5");
    EXPECT_TRUE(pool.async_release_if_exists(1).get());
    EXPECT_EQ(pool.async_drain_permits().get(), 6);
    EXPECT_EQ(raw->string({"GET", "pool"}), "0");

    Delivered<std::int64_t> available, drained;
    Delivered<bool> set, released;
    std::promise<std::exception_ptr> added;
    pool.async_add_permits(4, [&](std::exception_ptr e) { added.set_value(e); });
    EXPECT_EQ(added.get_future().get(), nullptr);
    pool.async_available_permits(available.done());
    EXPECT_EQ(available.value(), 4);
    pool.async_release_if_exists(2, released.done());
    EXPECT_TRUE(released.value());
    pool.async_drain_permits(drained.done());
    EXPECT_EQ(drained.value(), 6);
    Semaphore fresh(client, "fresh");
    fresh.async_try_set_permits(1, 60s, set.done());
    EXPECT_TRUE(set.value());
    EXPECT_GT(raw->integer({"PTTL", "fresh"}), 50000);
}

TEST_F(SemaphoreFaces, ErrorsReachTheFuturesAndCallbacks) {
    Client client(config());
    raw->command({"HSET", "pool", "a", "1"});
    Semaphore pool(client, "pool");
    EXPECT_THROW(pool.async_available_permits().get(), WrongTypeError);
    EXPECT_THROW(pool.async_drain_permits().get(), WrongTypeError);
    EXPECT_THROW(pool.async_release_if_exists(1).get(), WrongTypeError);
    EXPECT_THROW(pool.async_add_permits(1).get(), WrongTypeError);
    EXPECT_THROW(pool.async_try_set_permits(1).get(), WrongTypeError);
    Delivered<std::int64_t> available;
    pool.async_available_permits(available.done());
    EXPECT_THROW(available.value(), WrongTypeError);
    // Bad arguments are refused before anything is sent.
    expect_invalid_argument([&] { pool.release_if_exists(-1); }, "permits must be >= 0");
    expect_invalid_argument([&] { pool.try_set_permits(1, 0ms); }, "ttl must be > 0 ms");
    expect_invalid_argument([&] { pool.async_try_set_permits(1, -5ms); }, "ttl must be > 0 ms");
}

TEST_F(SemaphoreFaces, ReleaseIfExistsNeverMakesACount) {
    Client client(config());
    Semaphore pool(client, "pool");
    EXPECT_FALSE(pool.release_if_exists());
    EXPECT_FALSE(pool.release_if_exists(3));
    EXPECT_EQ(raw->integer({"EXISTS", "pool"}), 0);
    pool.release();  // release() makes one
    EXPECT_EQ(raw->string({"GET", "pool"}), "1");
    EXPECT_TRUE(pool.release_if_exists(3));
    EXPECT_EQ(raw->string({"GET", "pool"}), "4");
    EXPECT_FALSE(pool.release_if_exists(0)) << "nothing released (Redisson alike)";
}

TEST_F(SemaphoreFaces, ACountWithATimeToLiveKeepsItWhenPermitsMove) {
    Client client(config());
    Semaphore pool(client, "pool");
    ASSERT_TRUE(pool.try_set_permits(3, std::chrono::minutes(2)));
    EXPECT_EQ(raw->string({"GET", "pool"}), "3");
    EXPECT_TRUE(pool.try_acquire(2));
    pool.release();
    pool.add_permits(1);
    EXPECT_TRUE(pool.release_if_exists());
    EXPECT_EQ(raw->string({"GET", "pool"}), "4");
    const long long pttl = raw->integer({"PTTL", "pool"});
    EXPECT_GT(pttl, 100000);
    EXPECT_LE(pttl, 120000);
}

// The stop-token forms a Lock user expects: try_acquire_for(wait, stop),
// try_acquire_until(deadline, stop) and acquire(stop), for one permit.
TEST_F(SemaphoreFaces, EveryWaitTakesAStopToken) {
    Client client(config());
    Semaphore pool(client, "pool");
    ASSERT_TRUE(pool.try_set_permits(0));
    const auto far = std::chrono::steady_clock::now() + 60s;
    auto stopped = [&](std::function<bool(std::stop_token)> wait) { expect_stop_ends("redisson_sc:{pool}", wait); };
    stopped([&](std::stop_token s) { return pool.acquire(s); });
    stopped([&](std::stop_token s) { return pool.try_acquire_for(60s, s); });
    stopped([&](std::stop_token s) { return pool.try_acquire_until(far, s); });
    stopped([&](std::stop_token s) { return pool.try_acquire_until(2, far, s); });
    EXPECT_EQ(raw->string({"GET", "pool"}), "0");
    // Not stopped, the same forms take what is free.
    pool.release(2);
    EXPECT_TRUE(pool.try_acquire_for(1s, std::stop_token()));
    EXPECT_TRUE(pool.try_acquire_until(far, std::stop_token()));
    EXPECT_EQ(pool.available_permits(), 0);
}

}  // namespace
}  // namespace holdfast::testing
