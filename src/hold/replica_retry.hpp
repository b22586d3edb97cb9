// What an acquire does after replica sync refused what its attempt took
// (and gave it back): a pure decision, so each case is a table test.
#pragma once

#include <chrono>
#include <optional>

namespace holdfast::detail {

/// The pause before trying again: a failover under way needs a moment.
constexpr auto replica_retry_pause = std::chrono::milliseconds(200);

enum class AfterReplicaRefusal {
    retry,    ///< after replica_retry_pause, as a wait goes on after any refusal
    fail,     ///< with the replica sync error: a try, or a deadline the pause would pass
    stopped,  ///< the caller's stop: not acquired, no error
};

/// `deadline`: the caller's (nullopt: waits as long as it takes).
inline AfterReplicaRefusal after_replica_refusal(std::optional<std::chrono::steady_clock::time_point> deadline,
                                                 bool stop_requested, std::chrono::steady_clock::time_point now) {
    if (stop_requested) return AfterReplicaRefusal::stopped;
    if (deadline && *deadline <= now + replica_retry_pause) return AfterReplicaRefusal::fail;
    return AfterReplicaRefusal::retry;
}

}  // namespace holdfast::detail
