// What a Client shares with its locks: transport, watchdog, identity.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "holdfast/client.hpp"
#include "holdfast/config.hpp"
#include "hold/resends.hpp"
#include "multi_value_lock/owner_sets.hpp"
#include "primitive/wait_queues.hpp"
#include "watchdog/hold_ledger.hpp"
#include "watchdog/watchdog.hpp"
#include "telemetry/telemetry.hpp"
#include "transport/transport.hpp"

namespace holdfast::detail {

class ClientCore {
public:
    explicit ClientCore(const Config& config);
    ~ClientCore();

    const std::string uuid;
    // Shared with the transport's connections, whose Config tells it events.
    const std::shared_ptr<const Telemetry> telemetry;
    Transport transport;
    // Its waiters' queues, on the transport's subscriber.
    WaitQueues wait_queues;
    Watchdog watchdog;
    HoldLedger holds;
    // Releases to be sent again: unconfirmed, or unanswered (hold/release_hold.cpp).
    Resends resends;
    // The group lock's sets per owner, which its release counts by (multi_value_lock/release.lua).
    OwnerSets group_sets;

    /// "<uuid>:<thread-id>" of the calling thread, built once per thread.
    const std::string& current_owner() const;
    std::string new_owner();
    /// A new id for a waiter that releases may name (lock/handoff.lua.part):
    /// this client's random 38 bits, then a 24-bit count, so ids of clients
    /// everywhere differ (bar a 1 in 2^38 chance, which costs a wasted wake-up).
    std::uint64_t new_waiter_id();
    /// Whether new_waiter_id() gave out `id`.
    bool gave_out(std::uint64_t id) const { return (id & ~std::uint64_t{0xffffff}) == waiter_id_base_; }

private:
    // Explicit owners count from 2^32 so they never equal a Linux thread id.
    std::atomic<std::uint64_t> next_owner_{std::uint64_t{1} << 32};
    const std::uint64_t waiter_id_base_;
    std::atomic<std::uint64_t> next_waiter_{0};
};

/// The library's (and its tests') way from a Client to its core.
struct ClientAccess {
    static ClientCore& core(const Client& client) { return *client.core_; }
};
inline ClientCore& core_of(const Client& client) { return ClientAccess::core(client); }

}  // namespace holdfast::detail
