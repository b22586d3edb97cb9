// After replica sync refused what an attempt took: retry, fail or stop, without a server.
#include "hold/replica_retry.hpp"

#include <gtest/gtest.h>

namespace holdfast::detail {
namespace {

using namespace std::chrono_literals;
using After = AfterReplicaRefusal;

TEST(ReplicaRetry, EveryCase) {
    const auto now = std::chrono::steady_clock::time_point{} + 1h;
    struct Row {
        const char* what;
        std::optional<std::chrono::steady_clock::time_point> deadline;
        bool stop;
        After after;
    } rows[] = {
        {"lock(): no deadline, waits on", std::nullopt, false, After::retry},
        {"a deadline past the pause", now + replica_retry_pause + 1ms, false, After::retry},
        {"a deadline the pause would reach", now + replica_retry_pause, false, After::fail},
        {"a deadline before the pause ends", now + replica_retry_pause / 2, false, After::fail},
        {"try_lock(): a deadline already passed", now - 1ms, false, After::fail},
        {"stopped, no deadline: not acquired, no error", std::nullopt, true, After::stopped},
        {"stopped beats a deadline that has passed", now - 1ms, true, After::stopped},
    };
    for (const auto& row : rows) EXPECT_EQ(after_replica_refusal(row.deadline, row.stop, now), row.after) << row.what;
}

}  // namespace
}  // namespace holdfast::detail
