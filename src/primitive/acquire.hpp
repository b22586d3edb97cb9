// The acquire skeleton every primitive shares: try; if refused, subscribe to
// the release channel, try again, sleep until a message or the holder's TTL,
// repeat until taken or the deadline passes; then leave the channel.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "errors/failure.hpp"
#include "primitive/hold_id.hpp"
#include "primitive/wait_queue.hpp"

namespace holdfast::detail {

class Telemetry;
class Transport;
class WaitQueues;

/// Where an acquire counts its waiters (the hold pipeline counts the rest):
/// nowhere without a telemetry.
struct Meter {
    const Telemetry* telemetry = nullptr;
    std::string_view kind;  ///< "fair lock": a literal
};

/// Outcome of one atomic acquire attempt (one script call).
struct Attempt {
    enum class Outcome { acquired, refused, failed };
    Outcome outcome = Outcome::failed;
    /// refused: the holder's remaining lease in ms (-1: no TTL, -2: gone meanwhile).
    long long ttl = -1;
    Failure error;
    /// acquired: the fencing token, where the primitive has one.
    std::int64_t token = 0;
    /// refused, but the refusal says nothing of the waiters behind this one (a
    /// semaphore waiter for more permits than are free): a wake-up that led
    /// to this attempt goes on to the later waiters rather than being used up.
    bool pass_on = false;

    static Attempt acquired(std::int64_t token = 0) { return {Outcome::acquired, 0, nullptr, token}; }
    static Attempt refused(long long ttl, bool pass_on = false) { return {Outcome::refused, ttl, nullptr, 0, pass_on}; }
    static Attempt failed(Failure e) { return {Outcome::failed, 0, std::move(e), 0}; }
};

/// Redisson's lock channels: unlock_all_message wakes every waiter (a write
/// unlock), a waiter's id the waiter named (wakes::named), any other message
/// one (primitive/names.hpp).
std::size_t redisson_lock_wakes(std::string_view payload);

/// For primitives without a channel (the spin lock): sleep between attempts,
/// `first` doubling with jitter up to `max`, never past the holder's TTL.
struct Backoff {
    std::chrono::milliseconds first{1};
    std::chrono::milliseconds max{128};
};

struct AcquireRequest {
    /// Channel on which releases are announced; unused with a backoff.
    std::string channel;
    /// Subscribed with SSUBSCRIBE (Transport::shards_channel; set by the hold pipeline).
    bool sharded = false;
    /// Runs one attempt for the hold and calls `report` with the outcome, on
    /// the loop thread. Every step gets the operation's hold, kept as long as
    /// the operation: a step need not copy its names.
    std::function<void(const HoldId& hold, std::function<void(Attempt)> report)> attempt;
    /// Set: a refusal without a TTL (-1) is checked by this step before the
    /// machine sees it, with the hold, reporting what it found instead (a key
    /// that is no lock fails the wait rather than keeping it asleep for ever).
    std::function<void(const HoldId& hold, std::function<void(Attempt)> report)> verify_no_ttl;
    /// nullopt: wait as long as it takes. A deadline already past: one attempt.
    std::optional<std::chrono::steady_clock::time_point> deadline;
    Wakes wakes = redisson_lock_wakes;
    /// Not 0: the attempts list the waiter under this id, and a release names
    /// the first listed waiter, which alone tries (lock/handoff.lua.part). A
    /// release that named another leaves this one asleep, to try again
    /// Config::lock_handoff_check after it if no later release woke it (the
    /// one named may have died with the promise).
    std::uint64_t waiter_id = 0;
    /// With a waiter id: run with the primitive's key and a name this client
    /// gave out that no waiter of the channel answers to (it left without
    /// unlisting: a failover lost its give-up), to pass the free lock's
    /// promise on. The channel's queue keeps the first waiter's, with its key.
    std::function<void(const std::string& key, std::uint64_t waiter_id)> unclaimed_name;
    /// Set: poll with this backoff instead of listening on a channel.
    std::optional<Backoff> backoff;
    /// Runs when the operation ends without the primitive (deadline or error),
    /// before the handler; calls its argument when done. A fair lock leaves
    /// its queue here.
    std::function<void(const HoldId& hold, std::function<void()> done)> give_up;
    /// Runs when an attempt in flight at a stop took the primitive: releases
    /// that hold (one hold, for this owner), then calls its argument. Unset:
    /// such an operation completes as acquired instead.
    std::function<void(const HoldId& hold, std::function<void()> done)> give_back;
    /// Requested before the operation completes: it completes as not acquired
    /// (no error) and leaves nothing behind: give-up step run, channel left,
    /// and an attempt in flight awaited, what it took given back.
    std::stop_token stop;
    Meter meter;
    /// Set to when each attempt is sent, if given: what an attempt takes is
    /// leased from then at the latest (the hold pipeline's watchdog entry).
    std::chrono::steady_clock::time_point* sent_at = nullptr;
};

/// Completion: error set, or whether the primitive was acquired (with the
/// attempt's token). Runs on the loop thread, after the operation left its channel.
using AcquireHandler = std::function<void(Failure error, bool acquired, std::int64_t token)>;

/// Starts an acquire operation on the transport's loop (callable from any
/// thread) for a caller with no hold to name (RedLock's rounds); a waiter
/// joins its channel's queue in `queues`, the same client's. The hold
/// pipeline runs its own (primitive/acquire_operation.hpp).
void acquire(Transport& transport, WaitQueues& queues, AcquireRequest request, AcquireHandler done);

}  // namespace holdfast::detail
