// The watchdog: one timer per client renews every watchdog-leased hold in
// batches, and tells the holder when its hold turns out to be gone.
#pragma once

#include <asio.hpp>

#include <chrono>
#include <map>
#include <mutex>
#include <stop_token>
#include <string>
#include <utility>

#include "transport/reply.hpp"
#include "transport/script.hpp"

namespace holdfast::detail {

class Transport;

/// Knows keys, owners and a renew script per entry, nothing of lock types.
/// A renew script takes KEYS = keys, ARGV[1] = lease ms, ARGV[1 + i] = owner of
/// KEYS[i], and replies an array with 1 (renewed) or 0 (gone) per key.
///
/// Thread safety: track/untrack/lease_lost/tracked from any thread; the timer
/// runs on the transport's loop.
class Watchdog {
public:
    Watchdog(Transport& transport, std::chrono::milliseconds lease, std::size_t batch_size);
    ~Watchdog();

    /// Renews `key` for `owner` from now on (idempotent: re-entries add nothing).
    void track(const Script& renew, const std::string& key, const std::string& owner);
    /// Stops renewing: the server says the owner's last hold is released, or
    /// the unlock failed (the lease then ends the hold).
    void untrack(const std::string& key, const std::string& owner);

    /// Requested when renewal finds the hold gone; no stop state if not tracked.
    std::stop_token lease_lost(const std::string& key, const std::string& owner) const;
    bool tracks(const std::string& key, const std::string& owner) const;
    /// Holds being renewed (tests check nothing is left behind).
    std::size_t tracked() const;
    std::chrono::milliseconds lease() const { return lease_; }

private:
    struct Entry {
        const Script* renew;
        std::stop_source lost;
        std::uint64_t generation = 0;  // tells a re-taken hold from the one a renewal was sent for
    };
    using Id = std::pair<std::string, std::string>;  // key, owner
    struct Sent {
        Id id;
        std::uint64_t generation;
    };

    void arm();
    void tick();
    void on_renewed(const std::vector<Sent>& batch, const Reply& reply);

    Transport& transport_;
    const std::chrono::milliseconds lease_;
    const std::size_t batch_size_;
    asio::steady_timer timer_;

    mutable std::mutex mutex_;
    std::map<Id, Entry> entries_;
    bool armed_ = false;
    std::uint64_t next_generation_ = 0;
};

}  // namespace holdfast::detail
