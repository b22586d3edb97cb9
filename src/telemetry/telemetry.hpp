// A client's events and metrics: what its parts report, counted and passed
// on to the user's handler. Knows kinds of primitive by name only.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "holdfast/events.hpp"
#include "holdfast/metrics.hpp"

namespace holdfast::detail {

/// Thread safety: every member from any thread. The counting members cost a
/// few relaxed atomic adds, nothing with metrics off.
class Telemetry {
public:
    using Clock = std::chrono::steady_clock;
    enum class Outcome { acquired, gave_up, failed };

    Telemetry(EventHandler handler, bool counting, std::chrono::milliseconds slow_acquire);

    /// Counts what the event says and tells the user's handler (exceptions
    /// from it swallowed).
    void tell(const Event& event) const;
    /// Whether tell() does anything: callers skip building events otherwise.
    bool listening() const { return counting_ || static_cast<bool>(handler_); }

    /// An acquire of `name` by a primitive of kind `noun` ("fair lock")
    /// ended after `waited`; a slow one is told too.
    void acquire_ended(std::string_view noun, const std::string& name, Outcome outcome, Clock::duration waited) const;
    void waiting(std::string_view noun, int delta) const;
    void held(std::string_view noun, Clock::duration held_for) const;
    void renewed(std::string_view noun) const;

    Metrics snapshot() const;

    /// "fair_lock" for "fair lock", "count_down_latch" for "count-down latch": how metrics and events name a kind.
    static std::string label(std::string_view noun);

private:
    struct Histogram {
        std::array<std::atomic<std::uint64_t>, DurationHistogram::size + 1> counts{};
        std::atomic<std::uint64_t> sum_us{0};
        void observe(Clock::duration d);
        DurationHistogram read() const;
    };
    struct Counters {
        std::atomic<std::uint64_t> acquired{0}, gave_up{0}, failed{0};
        Histogram acquire_wait;
        std::atomic<std::int64_t> waiting{0};
        Histogram hold_time;
        std::atomic<std::uint64_t> renewals{0}, renewal_failures{0}, leases_lost{0}, release_failures{0};
        std::atomic<bool> used{false};
    };
    static constexpr std::size_t kinds = 13;
    /// The counters of a kind; nullptr when not counting or the kind is unknown.
    Counters* of(std::string_view noun) const;

    const EventHandler handler_;
    const bool counting_;
    const std::chrono::milliseconds slow_acquire_;
    mutable std::array<Counters, kinds> counters_;
    mutable std::atomic<std::uint64_t> connections_lost_{0}, reconnects_{0}, scripts_reloaded_{0};
    // Servers told `connected`: once per server, not once per connection of the pool.
    mutable std::mutex connected_mutex_;
    mutable std::set<std::string> connected_;
};

}  // namespace holdfast::detail
