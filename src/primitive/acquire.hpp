// The acquire skeleton every primitive shares: try; if refused, subscribe to
// the release channel, try again, sleep until a message or the holder's TTL,
// repeat until taken or the deadline passes; then leave the channel.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace holdfast::detail {

class Transport;

/// Outcome of one atomic acquire attempt (one script call).
struct Attempt {
    enum class Outcome { acquired, refused, failed };
    Outcome outcome = Outcome::failed;
    /// refused: the holder's remaining lease in ms (-1: no TTL, -2: gone meanwhile).
    long long ttl = -1;
    std::exception_ptr error;

    static Attempt acquired() { return {Outcome::acquired, 0, nullptr}; }
    static Attempt refused(long long ttl) { return {Outcome::refused, ttl, nullptr}; }
    static Attempt failed(std::exception_ptr e) { return {Outcome::failed, 0, std::move(e)}; }
};

/// Message policy of a release channel: does this payload wake every waiter
/// (true, e.g. "1" after a write unlock) or just one (false, "0")?
using WakesAll = bool (*)(std::string_view payload);
bool redisson_wakes_all(std::string_view payload);

struct AcquireRequest {
    /// Channel on which releases are announced.
    std::string channel;
    /// Runs one attempt and calls its argument with the outcome, on the loop thread.
    std::function<void(std::function<void(Attempt)>)> attempt;
    /// nullopt: wait as long as it takes. A deadline already past: one attempt.
    std::optional<std::chrono::steady_clock::time_point> deadline;
    WakesAll wakes_all = redisson_wakes_all;
};

/// Completion: error set, or whether the primitive was acquired. Runs on the
/// loop thread, after the operation left its channel.
using AcquireHandler = std::function<void(std::exception_ptr error, bool acquired)>;

/// Starts an acquire operation on the transport's loop (callable from any thread).
void acquire(Transport& transport, AcquireRequest request, AcquireHandler done);

}  // namespace holdfast::detail
