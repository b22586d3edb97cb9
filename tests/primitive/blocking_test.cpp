// The blocking API's wait for a result set on another thread: the result
// arrives whether it comes before the wait or after the caller has gone to
// sleep, and one caller's result never reaches another. No server.
#include "primitive/blocking.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace holdfast::detail {
namespace {

TEST(Blocking, AResultSetBeforeTheWaitIsReturnedAtOnce) {
    BlockingResult<int> result;
    result.set(nullptr, 7);
    EXPECT_EQ(result.get(), 7);
}

TEST(Blocking, AnErrorIsRethrownToTheCaller) {
    BlockingResult<int> result;
    result.set(std::make_exception_ptr(std::runtime_error("server gone")), 0);
    EXPECT_THROW(result.get(), std::runtime_error);
}

TEST(Blocking, AResultFromAnotherThreadReachesTheCaller) {
    BlockingResult<int> result;
    std::thread setter([&result] { result.set(nullptr, 11); });
    EXPECT_EQ(result.get(), 11);
    setter.join();
}

// Late enough that the caller is asleep on the futex when the result comes
// (whichever path, the value must arrive: no timing is asserted).
TEST(Blocking, AResultLaterWakesTheSleepingCaller) {
    BlockingResult<int> result;
    std::thread setter([&result] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        result.set(nullptr, 13);
    });
    EXPECT_EQ(result.get(), 13);
    setter.join();
}

// Each thread's wait is its own: many callers blocked at once each get
// their own value, call after call.
TEST(Blocking, ManyCallersAtOnceEachGetTheirOwnResult) {
    constexpr int callers = 8, calls = 200;
    std::vector<int> wrong(callers, 0);
    std::vector<std::thread> threads;
    for (int c = 0; c < callers; ++c)
        threads.emplace_back([c, &wrong] {
            for (int i = 0; i < calls; ++i) {
                BlockingResult<int> result;
                const int expected = c * 1000 + i;
                std::thread setter([&result, expected] { result.set(nullptr, expected); });
                if (result.get() != expected) ++wrong[c];
                setter.join();
            }
        });
    for (auto& t : threads) t.join();
    for (int c = 0; c < callers; ++c) EXPECT_EQ(wrong[c], 0) << "caller " << c;
}

}  // namespace
}  // namespace holdfast::detail
