// What one release of one hold came to, decided from the facts alone: no I/O,
// no clock, no lock. The hold pipeline (hold/release_hold.cpp) gathers the facts
// and carries out the decision; tests/primitive/release_verdict_test.cpp
// checks every row of the table.
#pragma once

#include <cstdint>
#include <string_view>

namespace holdfast::detail {

/// What the server did with one release script call.
enum class ReleaseReply {
    released,    ///< 1: the owner's last hold went; the lock is free and announced
    still_held,  ///< 0: one hold went; the owner holds others
    not_held,    ///< nil: the owner held nothing
    refused,     ///< an error reply (ACL, CROSSSLOT, OOM ...): every script writes last, so nothing changed
    no_reply,    ///< the connection failed with it in flight: it may or may not have run
};

/// How the release ended, as the caller is told it.
enum class ReleaseVerdict {
    released,  ///< the hold is gone (a partial unlock of a reentrant lock included)
    not_held,  ///< the owner held nothing: never locked, unlocked already, lease ran out, force-unlocked
    lost,      ///< the hold's lease lapsed locally before this release: another owner may have held it since
    refused,   ///< the server refused the release: the hold stays until its lease ends, unrenewed
    unknown,   ///< no reply: released or not, its lease ends the hold, unrenewed
    /// released on the master, but no replica acknowledged it (replica sync
    /// wait or required): a failover could bring the hold back until its lease ends
    unconfirmed,
};

std::string_view to_string(ReleaseVerdict verdict);

struct ReleaseFacts {
    ReleaseReply reply = ReleaseReply::no_reply;
    /// Holds of this owner the client had told its callers of, before this
    /// release (HoldLedger); 0 if none.
    std::int64_t known = 0;
    /// The watchdog had found the hold's local lease deadline passed.
    bool lost_locally = false;
    /// Replica sync asked for a replica's acknowledgement of the release and got none.
    bool unconfirmed = false;
};

struct ReleaseDecision {
    ReleaseVerdict verdict = ReleaseVerdict::unknown;
    /// What the ledger keeps of the owner's holds afterwards.
    enum class Ledger { one_fewer, forget } ledger = Ledger::one_fewer;
    /// The watchdog stops renewing the hold and forgets it. A release that
    /// was tried ends the renewal whatever its outcome, unless the owner
    /// still holds the lock by the server's word.
    bool end_renewal = true;
    /// Holds the owner still believes in may be gone or about to lapse:
    /// request its lease-lost token (before the watchdog forgets it).
    bool tell_lost = false;
    /// The server counts holds of the owner that no caller was told of (their
    /// acquires' replies were lost): release those too, then end the renewal.
    bool give_back_rest = false;
    /// The owner's last hold ended here: its hold time is counted.
    bool count_hold_time = false;
};

ReleaseDecision judge(const ReleaseFacts& facts);

}  // namespace holdfast::detail
