// The watchdog: one timer per client renews every watchdog-leased hold in
// batches, and tells the holder when its hold is gone or can no longer be
// trusted (no renewal confirmed for a whole lease, less a margin).
#pragma once

#include <asio.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "watchdog/lease_book.hpp"
#include "transport/reply.hpp"
#include "transport/script.hpp"

namespace holdfast::detail {

class Telemetry;
class Transport;

/// Knows keys, owners, leases and a renew script per entry, nothing of lock
/// types. A renew script takes KEYS = keys, ARGV[1] = lease ms, ARGV[1 + i] =
/// owner of KEYS[i], and replies an array with 1 (renewed) or 0 (gone) per key.
///
/// Every hold it knows of has a local lease deadline: the send time of the
/// last command the server confirmed set its TTL (the acquire, then each
/// renewal), plus that TTL, less lease_margin(). Since the server ran the
/// command after it was sent, the server's lease ends later. When the
/// deadline passes unrenewed (the server unreachable, paused, refusing), the
/// hold is lost: its stop token is requested and lost() says so until the
/// owner's unlock, before anyone else can have taken the lock.
///
/// Thread safety: every member from any thread; the timer runs on the
/// transport's loop.
class Watchdog {
public:
    using Clock = std::chrono::steady_clock;

    /// Tells `telemetry` of renewals, failed renewals and lost holds.
    Watchdog(Transport& transport, const Telemetry& telemetry, std::chrono::milliseconds lease,
             std::size_t batch_size);
    ~Watchdog();

    /// A hold of `key` by `owner` was taken (or re-entered) by a command sent at
    /// `sent` that set its TTL to `ttl`. `renew`: the script that renews it
    /// every third of lease(); nullptr for an explicit lease, watched only. A
    /// hold already renewed stays renewed. `kind` ("fair lock", a literal)
    /// names it in metrics and events.
    void track(const Script* renew, std::string_view kind, const std::string& key, const std::string& owner,
               Clock::time_point sent, std::chrono::milliseconds ttl);
    /// A command sent at `sent` set the hold's TTL to at least `ttl`: its
    /// local deadline counts from it (LeaseBook::extend).
    void extend(const std::string& key, const std::string& owner, Clock::time_point sent, std::chrono::milliseconds ttl);
    /// Forgets the hold: a release of it was tried (primitive/release_verdict.hpp
    /// says when the rest stays renewed). `tell_lost`: its lease-lost token is
    /// requested first, for holds the owner still believed in.
    void untrack(const std::string& key, const std::string& owner, bool tell_lost = false);

    /// Requested when the hold is found gone or its local deadline passes; no
    /// stop state if not tracked.
    std::stop_token lease_lost(const std::string& key, const std::string& owner) const;
    /// How long ago the hold's local deadline passed; nullopt while it is trusted.
    std::optional<std::chrono::milliseconds> lost_for(const std::string& key, const std::string& owner) const;
    /// Whether the hold is watchdog-renewed (not an explicit lease).
    bool renews(const std::string& key, const std::string& owner) const;
    /// Holds tracked (tests check nothing is left behind).
    std::size_t tracked() const;

    // The ledger's counts, kept in the same records (HoldLedger says why).
    void taken(const std::string& key, const std::string& owner);
    std::int64_t known(const std::string& key, const std::string& owner) const;
    std::optional<Clock::duration> given_back(const std::string& key, const std::string& owner, bool all);
    std::size_t counted() const;
    std::chrono::milliseconds lease() const { return lease_; }

private:
    using Sent = LeaseBook::Sent;

    /// Loop thread: sets the timer to the next renewal or deadline, whichever is first.
    void arm();
    void on_timer();
    void renew_all(Clock::time_point now);
    /// Sends one renew script call for `batch` (holds of one script and shard).
    void send_renewal(const Script& renew, std::shared_ptr<std::vector<Sent>> batch, Clock::time_point now);
    void on_renewed(const std::vector<Sent>& batch, const Reply& reply, Clock::time_point sent);
    /// A renewal command failed: each hold it carried is told as renewal_failed.
    void renewal_failed(const std::vector<Sent>& batch, const std::string& why);
    /// Outside mutex_: stops the holds' tokens (user code) and tells telemetry.
    void tell_lost(std::vector<LeaseBook::Loss>& lost);

    Transport& transport_;
    const Telemetry& telemetry_;
    const std::chrono::milliseconds lease_;
    asio::steady_timer timer_;

    mutable std::mutex mutex_;
    LeaseBook book_;  // what to renew, what is lost, local deadlines; the ledger's counts
};

}  // namespace holdfast::detail
