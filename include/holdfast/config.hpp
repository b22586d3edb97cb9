// Client configuration: a plain aggregate, names after Redisson's where one exists.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "holdfast/export.hpp"

namespace holdfast {

/// The longest lease, timeout or watchdog timeout holdfast accepts (100 years).
/// Longer ones would overflow steady_clock deadlines (nanoseconds: about 292
/// years) and Redis's expiry times. A longer *wait* simply means no deadline.
inline constexpr std::chrono::milliseconds max_duration = std::chrono::years(100);

namespace detail {

/// Rounded up to whole milliseconds; a duration beyond what milliseconds can
/// hold (hours::max(), say) saturates instead of overflowing.
template <class Rep, class Period>
std::chrono::milliseconds to_ms(const std::chrono::duration<Rep, Period>& d) {
    using Wide = std::chrono::duration<long double, std::milli>;
    const Wide wide = d;
    if (wide >= Wide(std::chrono::milliseconds::max())) return std::chrono::milliseconds::max();
    if (wide <= Wide(std::chrono::milliseconds::min())) return std::chrono::milliseconds::min();
    return std::chrono::ceil<std::chrono::milliseconds>(d);
}

/// Whole milliseconds left until `deadline` on any clock, 0 if it has passed
/// (checked first: deadline - now overflows for time_point::min()).
template <class Clock, class ClockDuration>
std::chrono::milliseconds ms_until(const std::chrono::time_point<Clock, ClockDuration>& deadline) {
    const auto now = Clock::now();
    if (deadline <= now) return std::chrono::milliseconds::zero();
    return to_ms(deadline - now);
}

}  // namespace detail

struct HOLDFAST_EXPORT Config {
    /// TCP server. Ignored when unix_socket is set.
    std::string host = "127.0.0.1";
    std::uint16_t port = 6379;
    /// Path of a Unix domain socket; empty for TCP.
    std::string unix_socket;
    /// AUTH credentials; empty password means no AUTH. Empty username means "default".
    std::string username;
    std::string password;
    /// SELECT'ed database number.
    int database = 0;

    /// How long one connection attempt may take.
    std::chrono::milliseconds connect_timeout{3000};
    /// How long a command may wait for its reply, and how long a command issued
    /// while disconnected waits for the connection to come back, before it fails.
    std::chrono::milliseconds timeout{3000};
    /// First reconnect delay after a connection drops; doubles per failed
    /// attempt up to retry_interval_max.
    std::chrono::milliseconds retry_interval{50};
    std::chrono::milliseconds retry_interval_max{2000};
    /// Command connections per server; commands for one key always use the same one.
    std::size_t connection_pool_size = 2;

    /// Lease of a lock taken without an explicit lease; the watchdog renews it
    /// every third of this while held (Redisson's lockWatchdogTimeout).
    std::chrono::milliseconds lock_watchdog_timeout{30000};
    /// Locks renewed per script call by the watchdog (lockWatchdogBatchSize).
    std::size_t lock_watchdog_batch_size = 100;

    /// Fills a Config from redis://[user:password@]host[:port][/db], or for a
    /// Unix socket unix:///path/to.sock, unix://[user]:password@/path/to.sock,
    /// with the parameters ?db=N&password=...&username=... (both forms:
    /// docs/errors.md). %-escapes work in the user and password. Throws
    /// std::invalid_argument on a malformed URI.
    static Config from_uri(std::string_view uri);

    /// "host:port" or the socket path: how errors name this server.
    std::string server_name() const;
};

}  // namespace holdfast
