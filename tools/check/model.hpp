// The merged history of one run, as holds and attempts per lock, and the
// rules for which faults make which anomalies expected (RELIABILITY.md,
// "What is promised").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "history.hpp"
#include "resource.hpp"

namespace holdfast::check {

/// A worker's stretch of time: what excuse() looks at.
struct Window {
    int worker = 0;
    Nanos from = 0;
    Nanos to = 0;
};

/// A stretch the machine held the checker's own thread up (StallMonitor):
/// time no process on it could count on.
struct Stall {
    Nanos from = 0;
    Nanos to = 0;
};

/// One call to acquire, whatever came of it.
struct Attempt {
    int worker = 0;
    long hold = 0;
    int lock = 0;
    Nanos invoke = 0;
    Nanos done = 0;  // its ok/fail/unknown, or the worker's death
    Phase outcome = Phase::invoke;  // invoke: never completed (the worker died)
    Access access = Access::exclusive;
    Nanos queued = 0;  // FairLock: when the waiter first saw itself in the queue (0: never)
    std::string owner;    // the owner id it asked for the lock as
    std::string message;  // its error, if it failed
    Window window() const { return {worker, invoke, done}; }
};

/// One granted acquisition: the holder acts as the holder from `ack`
/// (acquire returned) until `end` (it called release, or died).
struct Hold {
    int worker = 0;
    long hold = 0;
    int lock = 0;
    Nanos invoke = 0;
    Nanos ack = 0;
    Nanos end = 0;
    Access access = Access::exclusive;
    Nanos queued = 0;  // as Attempt::queued
    std::int64_t token = -1;
    Phase release = Phase::invoke;  // invoke: never released (died)
    Nanos released = 0;             // when release returned
    std::int64_t left_after_release = 0;  // hold count the lock still had for the worker after a release
    Nanos lost = 0;  // when the library first told the holder its lease was lost (0: never); may precede ack
    std::string owner;  // the owner id its acquire took the lock as (empty in older histories)
    std::string values;  // a group lock's hold: the values it took, one letter each (empty: the whole lock)
    std::string release_error;  // its release's error, if it failed
    /// Its release failed with ReplicaSyncError: done on the master, confirmed by no replica.
    bool unconfirmed() const { return release == Phase::fail && release_error.starts_with(unconfirmed_release); }
    /// Its release was refused (an ACL, a full server): the library says nothing changed. Not one
    /// that found the hold gone (NotOwnerError: "does not hold", LeaseLostError: "was lost by").
    bool refused() const {
        return release == Phase::fail && !unconfirmed() && release_error.find("does not hold") == std::string::npos &&
               release_error.find("was lost by") == std::string::npos;
    }
    std::string id() const { return hold_id(worker, hold); }
    bool shared() const { return access == Access::shared; }
    /// Whether this hold and `other` exclude each other: the same lock, and
    /// for a group lock values in common (each hold with none names the whole lock).
    bool conflicts(const Hold& other) const {
        if (values.empty() || other.values.empty()) return !(shared() && other.shared());
        return values.find_first_of(other.values) != std::string::npos;
    }
    /// From its acquire call to its end.
    Window window() const { return {worker, invoke, end}; }
};

/// What the checker needs besides the history files.
struct RunFacts {
    std::string dir;
    Duration lease{1000};
    Duration timeout{1000};
    Primitive primitive = Primitive::rlock;
    std::int64_t permits = 1;  // holds allowed at once: a semaphore's permits, else 1
    bool strict = false;  // excuse nothing: every anomaly is a violation
    bool replicas_synced = true;  // Config::replica_sync wait or required (off: a failover may lose what it had)
    int locks = 0;
    Nanos start = 0;
    Nanos stop = 0;  // when the workers were told to stop
    std::vector<std::pair<int, Nanos>> killed;  // worker -> SIGKILL time
    std::vector<ResourceState> resources;       // per lock
    std::vector<std::string> worker_failures;   // crashed or hung workers, already described
    std::vector<Stall> stalls;                  // by time: the machine too busy to keep time

    bool fenced() const { return primitive == Primitive::fenced; }
    bool semaphore() const { return is_semaphore(primitive); }
    /// How long a waiter lost from a fair lock's queue can hold up those behind it.
    Duration queue_budget() const { return is_fair(primitive) ? fair_wait_budget : Duration(0); }
};

struct Model {
    std::vector<Event> events;
    std::vector<Fault> faults;
    std::vector<std::vector<Sample>> samples;    // per lock, by time: the witness's reads of the lock server
    std::vector<Heard> heard;                    // by time: the messages the unlock listener heard
    std::vector<SweptKey> swept;                 // the lock server's keys after the run
    std::vector<std::vector<Hold>> holds;        // per lock, by ack
    std::vector<std::vector<Attempt>> attempts;  // per lock, by invoke
    std::map<std::string, const Hold*> by_id;    // hold id -> hold
    long reads_refused = 0, writes_refused = 0, writes_acked = 0;
};

Model build_model(const RunFacts& facts);

/// Which faults can explain an anomaly: any that can end a lease without its
/// holder knowing; none (lost updates and stale writes under fencing: tokens
/// never go back, not even when a restart or failover loses the counter); or
/// (fair lock order) one that can lose a waiter's place in the queue or hold
/// up its joining it: a restart, a stalled server, dropped connections.
enum class Excusable { by_lease_loss, by_nothing, by_queue_loss };

/// Why an anomaly involving a hold (or a wait: `window`) is expected: a fault
/// during it (a holder's pause only if it is this worker's) that explains it,
/// or nullopt. Either hold of a pair may be the one whose lease ended unseen:
/// a holder paused just before its acquire's reply arrived learns of its
/// grant only after a later holder's.
std::optional<std::string> excuse(const RunFacts& facts, const Model& model, const Window& window, Excusable how);

/// The fault that cut `hold` off, so that the library may lose it and must
/// then tell its holder before anyone else can enter, or nullptr: a
/// partition of its worker during the hold (or healed while it was still
/// reconnecting, before its acquire), its worker's ACL narrowed by a command
/// (narrow-acl: renewals refused), or the replica paused (pause-replica:
/// under replica sync `required` no renewal is confirmed).
const Fault* cut_off(const Model& model, const Hold& hold);

/// The port of the node a failover fault took the master's role (or a slot's
/// primary's) from, as its detail names it ("... :A -> :B ..."); 0 for other faults.
int deposed_port(const Fault& fault);

/// The field of the lock's hash that a hold of `owner` on side `access` is:
/// a ReadWriteLock's writer is `owner:write` (its reads, and every other
/// lock's holder, `owner`). A writer whose release was refused keeps that
/// field while it reads: each side is judged by its own.
std::string field_of(const RunFacts& facts, const std::string& owner, Access access);

/// Whether `fields` (a witness's read or the sweep's of a lock's hash) show
/// `owner` holding side `access`: field_of()'s field; for a group lock, a
/// hold "<owner>=<value>" of one of `values` (of any value, if empty).
bool shows_hold(const RunFacts& facts, const std::vector<std::string>& fields, const std::string& owner, Access access,
                const std::string& values = {});

/// "12.345s" after the run's start, for messages.
std::string at(const RunFacts& facts, Nanos t);

}  // namespace holdfast::check
