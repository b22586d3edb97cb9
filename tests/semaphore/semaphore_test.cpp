// holdfast::Semaphore: counts, errors, contention and the std-like API.
#include <atomic>
#include <future>
#include <thread>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using SemaphoreBasics = RedisTest;

TEST_F(SemaphoreBasics, PermitsAreSetOnlyIfAbsent) {
    Client client(config());
    Semaphore pool(client, "pool");
    EXPECT_EQ(pool.available_permits(), 0);
    EXPECT_FALSE(pool.try_acquire());  // no count set: no permits
    EXPECT_TRUE(pool.try_set_permits(3));
    EXPECT_FALSE(pool.try_set_permits(5));
    EXPECT_EQ(raw->string({"GET", "pool"}), "3");
    EXPECT_EQ(pool.available_permits(), 3);
}

TEST_F(SemaphoreBasics, AcquireReleaseDrainAndAddPermits) {
    Client client(config());
    Semaphore pool(client, "pool");
    ASSERT_TRUE(pool.try_set_permits(3));
    EXPECT_TRUE(pool.try_acquire(2));
    EXPECT_EQ(raw->string({"GET", "pool"}), "1");
    EXPECT_FALSE(pool.try_acquire(2));  // only one is free: nothing is taken
    EXPECT_EQ(pool.available_permits(), 1);
    EXPECT_TRUE(pool.try_acquire(0));  // nothing to take (Redisson alike)
    pool.release(2);
    EXPECT_EQ(pool.available_permits(), 3);
    pool.release(0);
    EXPECT_EQ(pool.drain_permits(), 3);
    EXPECT_EQ(raw->string({"GET", "pool"}), "0");
    pool.add_permits(-2);
    EXPECT_EQ(pool.available_permits(), -2);
    EXPECT_FALSE(pool.try_acquire());
    pool.add_permits(3);
    EXPECT_TRUE(pool.try_acquire());
    EXPECT_EQ(Semaphore(client, "unset").drain_permits(), 0);
    EXPECT_EQ(raw->integer({"EXISTS", "unset"}), 0);
}

TEST_F(SemaphoreBasics, StdLikeTimedForms) {
    Client client(config());
    Semaphore pool(client, "pool");
    pool.try_set_permits(1);
    EXPECT_TRUE(pool.try_acquire_for(std::chrono::seconds(1)));
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(pool.try_acquire_for(std::chrono::milliseconds(300)));
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
    EXPECT_FALSE(pool.try_acquire_until(std::chrono::system_clock::now() - std::chrono::seconds(1)));
    pool.release();
    EXPECT_TRUE(pool.try_acquire_until(std::chrono::steady_clock::now() + std::chrono::seconds(1)));
    EXPECT_TRUE(eventually([&] { return subscribers("redisson_sc:{pool}") == 0; }));
    EXPECT_EQ(detail::core_of(client).transport.subscriber().channel_count(), 0u);
}

TEST_F(SemaphoreBasics, BadArgumentsAreRejectedAndNameTheArgument) {
    Client client(config());
    EXPECT_THROW(Semaphore(client, ""), std::invalid_argument);
    Semaphore pool(client, "args");
    auto names = [](auto call, const std::string& argument) {
        try {
            call();
        } catch (const std::invalid_argument& e) {
            const std::string what = e.what();
            return what.find(argument) != std::string::npos && what.find("'args'") != std::string::npos;
        }
        return false;
    };
    EXPECT_TRUE(names([&] { pool.try_set_permits(-1); }, "permits"));
    EXPECT_TRUE(names([&] { pool.acquire(-1); }, "permits"));
    EXPECT_TRUE(names([&] { pool.try_acquire(-3); }, "permits"));
    EXPECT_TRUE(names([&] { pool.release(-1); }, "permits"));
    EXPECT_TRUE(names([&] { pool.try_acquire_for(std::chrono::milliseconds(-1)); }, "wait"));
    EXPECT_TRUE(names([&] { pool.async_try_acquire(1, std::chrono::milliseconds(-1)); }, "wait"));
    EXPECT_TRUE(names([&] { pool.async_release(-2); }, "permits"));
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(SemaphoreBasics, KeysOfAnotherKindAreNamed) {
    Client client(config());
    raw->command({"HSET", "profile", "name", "ada"});
    Semaphore hash(client, "profile");
    try {
        hash.try_acquire();
        FAIL() << "acquired from a hash";
    } catch (const WrongTypeError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("'profile'"), std::string::npos) << what;
        EXPECT_NE(what.find("hash"), std::string::npos) << what;
        EXPECT_NE(what.find("semaphore"), std::string::npos) << what;
        EXPECT_NE(what.find(std::to_string(server->port())), std::string::npos) << what;  // the server
    }
    EXPECT_THROW(hash.release(), WrongTypeError);
    EXPECT_THROW(hash.available_permits(), WrongTypeError);
    EXPECT_THROW(hash.try_set_permits(1), WrongTypeError);

    raw->command({"SET", "motto", "carpe diem"});
    Semaphore text(client, "motto");
    EXPECT_THROW(text.try_acquire_for(std::chrono::milliseconds(200)), WrongTypeError);
    EXPECT_THROW(text.release(), WrongTypeError);
    EXPECT_THROW(text.drain_permits(), WrongTypeError);
    EXPECT_THROW(text.try_set_permits(1), WrongTypeError);  // not "a count exists"
    try {
        text.available_permits();
        FAIL() << "read a motto as a count";
    } catch (const WrongTypeError& e) {
        EXPECT_NE(std::string(e.what()).find("carpe diem"), std::string::npos) << e.what();
    }
    EXPECT_EQ(raw->string({"GET", "motto"}), "carpe diem");
    EXPECT_EQ(raw->string({"HGET", "profile", "name"}), "ada");
    EXPECT_EQ(detail::core_of(client).transport.subscriber().channel_count(), 0u);
}

// N permits, many threads in two clients: never more than N inside at once.
TEST_F(SemaphoreBasics, PermitsNeverExceedTheCountUnderContention) {
    constexpr int permits = 3, threads = 8, rounds = 25;
    Client a(config()), b(config());
    Semaphore(a, "slots").try_set_permits(permits);
    std::atomic<int> inside{0}, most{0}, done{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            Semaphore slots(t % 2 ? a : b, "slots");
            for (int i = 0; i < rounds; ++i) {
                slots.acquire();
                const int now = ++inside;
                int seen = most.load();
                while (now > seen && !most.compare_exchange_weak(seen, now)) {
                }
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                --inside;
                slots.release();
            }
            ++done;
        });
    for (auto& w : workers) w.join();
    EXPECT_EQ(done.load(), threads);
    EXPECT_LE(most.load(), permits);
    EXPECT_GE(most.load(), 2);  // it did run concurrently
    EXPECT_EQ(raw->string({"GET", "slots"}), std::to_string(permits));
    EXPECT_TRUE(eventually([&] { return subscribers("redisson_sc:{slots}") == 0; }));
}

TEST_F(SemaphoreBasics, AsyncForms) {
    Client client(config());
    Semaphore pool(client, "pool");
    pool.try_set_permits(1);
    EXPECT_TRUE(pool.async_try_acquire().get());
    EXPECT_FALSE(pool.async_try_acquire(1, std::chrono::milliseconds(100)).get());
    auto waiting = pool.async_acquire();
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_sc:{pool}") == 1; }));
    std::async(std::launch::async, [&] { pool.async_release().get(); }).get();
    ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    waiting.get();
    EXPECT_EQ(pool.available_permits(), 0);
}

TEST_F(SemaphoreBasics, ClosingTheClientFailsItsWaiters) {
    auto client = std::make_unique<Client>(config());
    Semaphore pool(*client, "pool");
    auto waiter = wait_until_closed([&] { pool.acquire(); });
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_sc:{pool}") == 1; }));
    client.reset();
    ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    const std::string why = waiter.get();
    EXPECT_NE(why.find("shutting down"), std::string::npos) << why;
}

// One argument order on every face (permits, wait, stop), and a stop for
// every future.
TEST_F(SemaphoreBasics, PermitsComeFirstAndEveryFutureTakesAStop) {
    Client client(config());
    Semaphore pool(client, "pool");
    pool.try_set_permits(1);
    EXPECT_FALSE(pool.try_acquire_for(2, std::chrono::milliseconds(200)));
    EXPECT_FALSE(pool.try_acquire_until(2, std::chrono::steady_clock::now() + std::chrono::milliseconds(200)));
    EXPECT_EQ(pool.available_permits(), 1);
    std::stop_source stop, stop_try;
    auto waiting = pool.async_acquire(2, stop.get_token());
    auto trying = pool.async_try_acquire(2, std::chrono::seconds(60), stop_try.get_token());
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_sc:{pool}") == 1; }));
    stop.request_stop();
    stop_try.request_stop();
    expect_stopped_untaken({&waiting, &trying});
    EXPECT_EQ(pool.available_permits(), 1);
    EXPECT_TRUE(pool.try_acquire_for(1, std::chrono::milliseconds(200)));
    EXPECT_TRUE(pool.async_acquire(0).get());  // none asked: at once
}

}  // namespace
}  // namespace holdfast::testing
