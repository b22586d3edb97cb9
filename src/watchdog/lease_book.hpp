// The bookkeeping of a client's holds, without I/O, lock or clock: one record
// per hold (key and owner) for both the ledger (HoldLedger: how many holds
// callers were told of) and the watchdog (its local lease deadline, which
// holds are due for renewal in which batches, which are lost). The Watchdog
// (watchdog.cpp) keeps the timer, the mutex, the transport and telemetry, and
// passes the time in.
#pragma once

#include <chrono>
#include <deque>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/name_hash.hpp"
#include "transport/reply.hpp"
#include "transport/script.hpp"

namespace holdfast::detail {

class LeaseBook {
public:
    using Clock = std::chrono::steady_clock;
    /// Owners that last held nothing, kept for their next hold.
    static constexpr std::size_t kept_empty_max = 64;
    using Id = std::pair<std::string, std::string>;  // key, owner
    /// A hold in a renewal, as it was when sent.
    struct Sent {
        Id id;
        std::uint64_t generation;
    };
    /// One renew script call: holds of one script and shard.
    struct Batch {
        const Script* renew = nullptr;
        std::vector<Sent> holds;
    };
    /// A hold found lost: its token to stop (none if nobody asked for it) and what to tell.
    struct Loss {
        std::stop_source source;
        std::string_view kind;
        Id id;
        std::string why;
    };
    /// What a renewal's reply did: the kinds renewed, the holds lost.
    struct Renewed {
        std::vector<std::string_view> kinds;
        std::vector<Loss> lost;
    };

    /// `lease`: what renewals set; renewals go every third of it.
    LeaseBook(std::chrono::milliseconds lease, std::size_t batch_size);

    // The ledger (HoldLedger).

    /// A caller was told at `now` that it took a hold.
    void taken(const std::string& key, const std::string& owner, Clock::time_point now);
    /// Holds callers were told of and have not given back; 0 if none.
    std::int64_t known(const std::string& key, const std::string& owner) const;
    /// One hold given back at `now` (`all`: every hold). How long since the
    /// first of them was taken, if any was known.
    std::optional<Clock::duration> given_back(const std::string& key, const std::string& owner, bool all,
                                              Clock::time_point now);
    /// Keys and owners with holds known.
    std::size_t counted() const { return counted_; }

    // The watchdog.

    /// A hold taken by a command sent at `sent` that set its TTL to `ttl`
    /// (Watchdog::track). Returns when the timer must fire, if earlier than
    /// it is armed for (it is then counted as armed for that).
    std::optional<Clock::time_point> track(const Script* renew, std::string_view kind, const std::string& key,
                                           const std::string& owner, Clock::time_point sent,
                                           std::chrono::milliseconds ttl, Clock::time_point now);
    /// A command sent at `sent` set the hold's TTL to at least `ttl`
    /// (Lock::extend_lease): its local deadline is now counted from it, as
    /// after a renewal. Nothing for a hold not tracked or already lost.
    void extend(const std::string& key, const std::string& owner, Clock::time_point sent, std::chrono::milliseconds ttl);
    /// Forgets the hold; returns its lease-lost source, if it was tracked.
    std::optional<std::stop_source> untrack(const std::string& key, const std::string& owner);

    /// The hold's lease-lost token (stopped already if it is lost); no stop
    /// state if not tracked.
    std::stop_token lease_lost(const std::string& key, const std::string& owner) const;
    std::optional<std::chrono::milliseconds> lost_for(const std::string& key, const std::string& owner,
                                                      Clock::time_point now) const;
    bool renews(const std::string& key, const std::string& owner) const;
    std::size_t tracked() const { return tracked_; }
    /// Owners with a record: those holding something, and the last few to
    /// hold nothing (kept for their next hold, at most kept_empty_max).
    std::size_t owner_records() const { return owners_.size(); }

    /// When the timer must fire next: the next renewal or local deadline,
    /// whichever is first; nullopt when nothing waits (then not armed).
    std::optional<Clock::time_point> next_wake();
    /// The timer fired at `now`: the holds whose deadline passed are lost
    /// (kept, no longer renewed, until untracked).
    std::vector<Loss> expire(Clock::time_point now);
    bool renewal_due(Clock::time_point now) const { return next_renewal_ && *next_renewal_ <= now; }
    /// The renewals to send at `now`, by script and shard (`shard_of` a key),
    /// at most batch_size holds each; the next is due a third of a lease later.
    std::vector<Batch> renewals(Clock::time_point now, const std::function<std::size_t(const std::string&)>& shard_of);
    /// The renewal of `batch` sent at `sent` replied `reply` (1 renewed, 0
    /// gone, per hold). Holds untracked, re-taken or lost meanwhile are left alone.
    Renewed renewed(const std::vector<Sent>& batch, const Reply& reply, Clock::time_point sent);
    /// Each hold's kind; empty for one untracked meanwhile.
    std::vector<std::string_view> kinds_of(const std::vector<Sent>& batch) const;

private:
    // A client may hold 100k locks: a record is kept small (no copy of the
    // owner's name, no stop state until someone asks for the token).
    struct Entry {
        // The ledger's part.
        std::int64_t count = 0;
        Clock::time_point since;  // of the first hold still counted
        // The watchdog's part, while watched.
        const Script* renew = nullptr;
        std::string_view kind;
        mutable std::stop_source lost{std::nostopstate};  // made when first asked for (lease_lost)
        std::uint64_t generation = 0;  // tells a re-taken hold from the one a renewal was sent for
        Clock::time_point deadline;    // local lease deadline
        bool watched = false;
        bool expired = false;  // the deadline passed: no longer renewed, kept until untracked
    };
    using Holds = std::unordered_map<std::string, Entry, NameHash, std::equal_to<>>;  // by key
    struct OwnerHolds {
        Holds holds;
        bool kept = false;  // listed in kept_empty_ (it may hold something again since)
    };
    using Owners = std::unordered_map<std::string, OwnerHolds, NameHash, std::equal_to<>>;  // each owner's name once

    Entry* find(std::string_view key, std::string_view owner);
    const Entry* find(std::string_view key, std::string_view owner) const;
    const Entry* watched(std::string_view key, std::string_view owner) const;
    Entry& emplace(const std::string& key, const std::string& owner);
    /// Ends the watchdog's part; the record goes once the ledger's part is gone too.
    void unwatch(std::string_view key, std::string_view owner);
    /// Drops the record if neither part is left.
    void drop_if_unused(std::string_view key, std::string_view owner);
    void keep_or_drop(Owners::iterator owner);
    static Loss lose(std::string_view key, std::string_view owner, Entry& entry, std::string why);

    const std::chrono::milliseconds lease_;
    const std::size_t batch_size_;
    Owners owners_;
    std::deque<std::string_view> kept_empty_;  // names in owners_, oldest first
    std::size_t tracked_ = 0;  // entries watched
    std::size_t counted_ = 0;  // entries with a count
    std::optional<Clock::time_point> armed_for_;     // when the timer fires; nullopt: not armed
    std::optional<Clock::time_point> next_renewal_;  // while some entry renews
    std::uint64_t next_generation_ = 0;
};

}  // namespace holdfast::detail
