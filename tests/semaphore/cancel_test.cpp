// A semaphore wait stopped while the attempt that takes its permits is in
// flight gives them back before its caller is told: the count is as it was
// and nothing is left (the semaphore twin of tests/lock/cancel_test.cpp).
#include <future>
#include <stop_token>

#include "core/client_core.hpp"
#include "pool_keys.hpp"
#include "primitive/call.hpp"
#include "stop_in_flight.hpp"

namespace holdfast::testing {
namespace {

const std::string expirable_timeouts = "{pool}:timeout";

class SemaphoreCancellation : public StopInFlightTest {
protected:
    void expect_nothing_left(Client& client) {
        EXPECT_TRUE(eventually([&] { return detail::core_of(client).transport.subscriber().channel_count() == 0; }));
        EXPECT_TRUE(eventually([&] { return subscribers(channel) == 0; }));
    }
};

TEST_F(SemaphoreCancellation, StoppedDuringTheAttemptThatTakesPermitsGivesThemBack) {
    Client client(config());
    Semaphore pool(client, "pool");
    ASSERT_TRUE(pool.try_set_permits(3));
    pause_writes(1s);
    std::stop_source stop;
    auto waiter = detail::future_of<bool>(
        [&](Completion<bool> done) { pool.async_try_acquire(2, 30s, stop.get_token(), std::move(done)); });
    stop.request_stop();
    expect_stopped(waiter);
    // Given back before the caller was told.
    EXPECT_EQ(raw->string({"GET", "pool"}), "3");
    EXPECT_EQ(pool.available_permits(), 3);
    expect_nothing_left(client);
}

TEST_F(SemaphoreCancellation, StoppedWhileWaitingTakesNothingAndLeavesTheChannel) {
    Client client(config()), releasing(config());
    Semaphore pool(client, "pool");
    ASSERT_TRUE(pool.try_set_permits(1));
    std::stop_source stop;
    auto waiter = detail::future_of<bool>(
        [&](Completion<bool> done) { pool.async_acquire(2, stop.get_token(), std::move(done)); });
    ASSERT_TRUE(eventually([&] { return subscribers(channel) == 1; }));
    stop.request_stop();
    expect_stopped(waiter);
    EXPECT_EQ(pool.available_permits(), 1);
    expect_nothing_left(client);
}

TEST_F(SemaphoreCancellation, ExpirableStoppedDuringTheAttemptThatTakesAPermitGivesItBack) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    ASSERT_TRUE(pool.try_set_permits(2));
    pause_writes(1s);
    std::stop_source stop;
    auto waiter = detail::future_of<std::optional<std::string>>([&](Completion<std::optional<std::string>> done) {
        pool.async_try_acquire(30s, std::nullopt, stop.get_token(), std::move(done));
    });
    stop.request_stop();
    expect_stopped(waiter);
    EXPECT_EQ(raw->string({"GET", "pool"}), "2");
    EXPECT_EQ(raw->integer({"ZCARD", expirable_timeouts}), 0) << "a permit id is still held";
    EXPECT_EQ(pool.available_permits(), 2);
    expect_nothing_left(client);
}

}  // namespace
}  // namespace holdfast::testing
