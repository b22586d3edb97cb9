// The life of a hold, one pipeline for every primitive:
//
//   acquire -> confirm (replica sync; under `required`, a hold no replica
//   has is given back) -> record (ledger, watchdog) -> the caller
//   release -> confirm -> verdict (primitive/release_verdict.hpp, pure)
//   -> untrack and report (lease-lost token, event, metric) -> the caller
//
// A primitive supplies a spec (its scripts and how to read their replies, its
// channel and wake policy, its give-up and give-back) and never wires these
// steps itself. The walk runs one way: primitive -> pipeline -> transport.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "primitive/acquire.hpp"
#include "primitive/hold_id.hpp"
#include "primitive/release_verdict.hpp"
#include "primitive/script_call.hpp"
#include "transport/script.hpp"

namespace holdfast::detail {

class ClientCore;

/// What the client keeps of a hold once the caller is told of it.
struct Keeping {
    bool ledger = false;               ///< counted in the HoldLedger (the lock family: a release tells extra holds apart)
    bool watched = false;              ///< the watchdog keeps its local lease deadline and tells its loss
    const Script* renew = nullptr;     ///< ... and renews it with this script (a watchdog lease)
    std::chrono::milliseconds ttl{0};  ///< the lease the acquire set
};

struct AcquireSpec {
    HoldId hold;
    /// Attempt and its decoder, channel and wake policy, give-up, deadline,
    /// stop and meter; its give_back releases the one hold an attempt took
    /// that the caller will not be told of (a stop landed, replicas did not
    /// confirm it), and is required wherever the acquire writes.
    AcquireRequest request;
    Keeping keeping;
    /// The acquire writes (a latch's await only reads): replica sync confirms it.
    bool writes = true;
    /// An acquire that failed with no reply may have taken the primitive:
    /// give_back then releases it, unless the ledger knows the owner holds it
    /// otherwise. Only where giving back what was never taken is harmless
    /// (an owner's hold, a permit by its id; not a semaphore's count).
    bool gives_back_unknown = false;
    /// How replica-sync errors name what was taken ("2 permit(s) of semaphore 's'"); default hold.subject().
    std::string taken;
};

/// Runs the acquire pipeline; `done` runs once on the loop thread, and what
/// it throws is told as a completion that threw (hold/contained.hpp).
void acquire_hold(ClientCore& core, AcquireSpec spec, AcquireHandler done);

struct ReleaseSpec {
    HoldId hold;
    /// Runs the release script once for `hold` (the spec's own, kept by the
    /// pipeline: a sender need not copy its names). `lease_ms`: what a
    /// still-held hold's TTL is raised to ("0": keep it, an explicit lease).
    std::function<void(const HoldId& hold, const std::string& lease_ms, ReplyHandler done)> send;
    /// What the reply says; the lock family's nil / 0 / 1 by default.
    std::function<ReleaseReply(const Reply&)> decode;
    /// The owner's holds are counted in the HoldLedger (the lock family).
    /// Otherwise the caller is taken at its word that it holds one (a permit id).
    bool ledger = true;
};

/// How a release ended: its verdict, and for every verdict but `released` the
/// error the checked forms throw (naming the hold, the server and what to do).
struct ReleaseOutcome {
    ReleaseVerdict verdict = ReleaseVerdict::released;
    Failure error;
};

/// Runs the release pipeline; `done` runs once on the loop thread, and what
/// it throws is told as a completion that threw (hold/contained.hpp). A failed
/// release has already been reported (event, metric, lease-lost token) when
/// `done` runs, so a caller that drops the outcome loses nothing.
void release_hold(ClientCore& core, ReleaseSpec spec, std::function<void(ReleaseOutcome)> done);

/// The lock family's release replies: nil not held, 0 still held, 1 released.
ReleaseReply lock_release_reply(const Reply& reply);

/// After a write that gives something back or opens something (a semaphore's
/// release, a latch's count-down): replica sync's WAIT as configured, then
/// `done` whatever it found.
void confirm_write(ClientCore& core, const std::string& key, std::function<void()> done);

}  // namespace holdfast::detail
