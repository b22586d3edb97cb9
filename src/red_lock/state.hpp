// A RedLock's own state: its members, its holds, and the renewal that keeps a
// quorum of them alive.
#pragma once

#include <asio.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "errors/failure.hpp"
#include "holdfast/lock.hpp"
#include "watchdog/lease.hpp"

namespace holdfast::detail {

class Transport;
class WaitQueues;

/// The Redlock algorithm's quorum of N servers (its clock drift: drift_of).
inline std::size_t quorum_of(std::size_t servers) { return servers / 2 + 1; }

/// The failure of a step (`verb`: "lock", "unlock") that too many servers
/// failed for a quorum: names each failed server and what it said. Its code is
/// the failures' common one; else, of their common kind, ConnectionError's
/// connection_lost or NotOwnerError's not_owner; else the first server error's
/// (errc::server_error if none).
Failure quorum_error(const std::string& description, std::string_view verb, const std::vector<Lock*>& locks,
                     const std::vector<std::pair<std::size_t, Failure>>& failures);

/// Shared by the RedLock and its operations in flight, so either may end first.
/// Thread safety: any thread; the renewal timer runs on home()'s loop.
class RedLockState : public std::enable_shared_from_this<RedLockState> {
public:
    using Clock = std::chrono::steady_clock;
    using Duration = std::chrono::milliseconds;
    using Owners = std::vector<std::string>;

    RedLockState(std::vector<Lock*> locks, std::string description);

    const std::vector<Lock*>& locks() const { return locks_; }
    std::size_t quorum() const { return quorum_of(locks_.size()); }
    const std::string& description() const { return description_; }
    /// The first lock's client's transport: the renewal timer and waiting run on its loop.
    Transport& home() const;
    /// That client's wait queues (primitive/wait_queues.hpp).
    WaitQueues& home_queues() const;
    /// Lease of a hold without an explicit one: the first client's lock_watchdog_timeout.
    Duration watchdog_lease() const;

    /// After an acquisition: one more hold by `owners`, valid until `until`,
    /// renewed every lease / 3 if `renewed`.
    void add_hold(const Owners& owners, Duration lease, bool renewed, Clock::time_point until);
    /// At an unlock: one hold fewer (forgotten at the last). True if it was lost.
    bool drop_hold(const Owners& owners);
    std::stop_token lost(const Owners& owners) const;
    std::optional<Duration> validity(const Owners& owners) const;
    /// True if `owners` hold it (not lost) and some member may not be taken
    /// twice: another acquisition by them would wait for itself.
    bool held_for_good(const Owners& owners) const;

    /// Releases `owners`' holds on `members` at once; `then` (if any) runs when all answered.
    void release_on(const Owners& owners, const std::vector<std::size_t>& members, std::function<void()> then);

    /// The RedLock is gone: no more renewals.
    void stop();

private:
    struct Hold {
        Owners owners;
        std::int64_t count = 0;
        Duration lease{0};
        bool renewed = false;       // by this state's timer
        bool renewing = false;      // a renewal round is in flight
        bool is_lost = false;
        Clock::time_point valid_until;
        std::stop_source lost;
        std::uint64_t generation = 0;  // tells a re-taken hold from the one a round was sent for
    };

    void arm();
    void tick();
    void renew(const std::string& key, std::uint64_t generation, const Owners& owners, Duration lease);
    void renewed(const std::string& key, std::uint64_t generation, bool quorum, Clock::time_point until);

    const std::vector<Lock*> locks_;
    const std::string description_;
    // Owned by its pending wait, not by the state: operations on other servers
    // may keep the state alive after the home client (and its loop) is gone.
    std::weak_ptr<asio::steady_timer> timer_;

    mutable std::mutex mutex_;
    std::map<std::string, Hold> holds_;
    bool armed_ = false;
    bool stopped_ = false;
    Clock::time_point next_renewal_;  // of the renewed holds, while armed
    std::uint64_t next_generation_ = 0;
};

}  // namespace holdfast::detail
