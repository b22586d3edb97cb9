// What a Client tells its operator: servers connected to (and what runs
// there), connections lost and restored, renewals that failed, leases lost,
// releases that failed, acquires that waited long, scripts reloaded,
// completions that threw.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "holdfast/export.hpp"

namespace holdfast {

/// One thing an operator may want to log or alert on (docs/operations.md).
/// Fields that do not apply to a kind are empty.
struct HOLDFAST_EXPORT Event {
    enum class Kind {
        connection_lost,      ///< server, detail (why); its commands in flight fail
        connection_restored,  ///< server, detail (what runs there, as for connected): reconnected after a loss
        renewal_failed,       ///< primitive, name, owner, server, detail: the watchdog retries next tick
        lease_lost,           ///< primitive, name, owner, server, detail: the hold is gone or untrusted
        slow_acquire,         ///< primitive, name, waited: longer than Config::slow_acquire_threshold
        script_reloaded,      ///< server, detail (script): a script this client had loaded there was gone (NOSCRIPT), sent again
        release_failed,       ///< primitive, name, owner, server, detail: an unlock that did not release (not held,
                              ///< lost, refused, outcome unknown); the hold is no longer renewed
        completion_threw,     ///< primitive, name, detail: a completion given to an async call threw; swallowed
        connected,            ///< server, detail (what runs there: "Redis 7.0.15", "Valkey 8.0.1"): this
                              ///< client's first connection to that server is ready; told once per server
    };
    Kind kind = Kind::connection_lost;
    std::string server;     ///< "host:port" (or the socket path)
    std::string primitive;  ///< "lock", "fair_lock", "semaphore" ... as Metrics names kinds
    std::string name;       ///< the lock's, semaphore's or latch's name (its key: Config::key_prefix included)
    std::string owner;      ///< "<client-uuid>:<thread-id>"
    std::chrono::milliseconds waited{0};
    std::string detail;

    /// One log line: "holdfast: lease_lost: fair_lock 'orders' owner '…' on 127.0.0.1:6380: …".
    std::string to_string() const;
};

/// "connection_lost", "lease_lost", ...: the kind as to_string() and the CLI print it.
HOLDFAST_EXPORT std::string_view to_string(Event::Kind kind);

/// Told each Event, on the client's event loop thread: keep it short (hand it
/// to a logger or a queue) and never call a blocking holdfast function from
/// it. An exception it throws is swallowed.
using EventHandler = std::function<void(const Event&)>;

}  // namespace holdfast
