// Stopping a wait at the moment its attempt is in flight, and checking that
// it ended untaken (tests/lock/cancel_test.cpp, tests/semaphore/cancel_test.cpp).
#pragma once

#include <future>

#include "redis_fixture.hpp"

namespace holdfast::testing {

class StopInFlightTest : public RedisTest {
protected:
    // Holds every write (scripts included) on the server for `how_long`, so
    // a stop requested now lands while the attempt sent next is in flight.
    void pause_writes(std::chrono::milliseconds how_long) {
        raw->command({"CLIENT", "PAUSE", std::to_string(how_long.count()), "WRITE"});
    }

    // The stopped wait ended, untaken (`T` false or empty).
    template <class T>
    static void expect_stopped(std::future<T>& waiter) {
        ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
        EXPECT_FALSE(waiter.get());
    }
};

}  // namespace holdfast::testing
