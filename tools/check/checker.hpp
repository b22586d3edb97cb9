// The checkers: safety (mutual exclusion or at most N holders, lost updates,
// stale writes, token order, FIFO order, leaked holds, resource integrity) and
// liveness (re-grant after a holder dies, wake-up after an unlock,
// unavailability, resuming after a failover), over one run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model.hpp"

namespace holdfast::check {

/// A count of anomalies of one kind: those the configuration promises to
/// prevent (violations) and those a fault explains (expected).
struct Tally {
    long violations = 0;
    long expected = 0;
};

struct RunResult {
    std::string scenario;
    Topology topology = Topology::server;
    Primitive primitive = Primitive::rlock;
    std::uint64_t seed = 0;
    std::string schedule;
    std::string dir;

    long attempts = 0, granted = 0, timed_out = 0, unknown = 0;
    long lost_leases = 0;  // release refused: the lease had run out
    long writes_acked = 0, refused = 0;  // refused: reads and writes the resource fenced out
    long faults = 0;
    long releases_in_migration = 0;  // releases invoked while their lock's slot migrated (cluster-migrate-slot)

    Tally overlaps;  // two holders at once (one of them exclusive), or more than N of a semaphore
    // Every overlap of two holds (not a semaphore's), expected or not, split:
    // told, the earlier holder was told (lease_lost_token()) it had lost the
    // lock before the later one's acquire returned, or the later one was told
    // at its return; untold, neither. Under partition-holder an untold overlap
    // with the partitioned holder is a violation, a told one is not (what
    // fencing is for); elsewhere the split only describes the overlaps.
    long untold = 0, told = 0;
    Tally lost_updates, stale_writes, token_order;
    Tally fifo;      // fair lock: a waiter granted before one that joined the queue well before it
    // A release that returned ok while the server kept the hold: the witness
    // saw the holder's owner field on a master after the release had returned
    // and before the holder's next acquire of that lock. Expected only under
    // a failover with replica sync off (asynchronous replication).
    Tally lost_releases;
    long leaked_holds = 0;  // release left a hold count behind
    long renewed_after_release = 0;  // a hold the watchdog still renewed after its release was tried
    long integrity = 0;     // acknowledged write missing from the resource, or a writer nobody invoked
    // What the lock server held (server_state.cpp): a key that should carry a
    // lease found without one (each stretch of the witness's reads, and each
    // key after the run, once); permits of a semaphore that do not add up
    // (expected after a fault that may lose writes, for a plain semaphore);
    // a hold on the server that its owner was told it did not have; an
    // unlock announced by a release that was refused.
    long keys_without_expiry = 0;
    Tally lost_permits;
    Tally unbelieved_holds;
    long false_unlocks = 0;
    long worker_failures = 0;

    long regrants = 0, slow_regrants = 0;
    Nanos regrant_max = 0;
    std::vector<double> wakeups_ms;  // unlock -> next grant, where someone waited
    long slow_wakeups = 0;           // over 100 ms where promised
    long stalled_wakeups = 0;        // over 100 ms, but not with the machine's stalls taken off
    Nanos longest_unavailable = 0;
    long stuck = 0;
    // Per failover (sentinel-* nemeses): how long the workers went without a
    // grant, from the last one before the master stopped granting to the
    // first after the failover. Measured, not judged.
    std::vector<double> resume_ms;
    // cluster-kill-primary-waiting: per fault, from the nemesis's release
    // (after the promotion) to the next grant, workers having waited across it.
    std::vector<double> failover_wakeups_ms;

    std::vector<std::string> findings;  // the violations, explained (the first few of each kind)

    long violations() const;
};

/// Checks the run described by `facts`. Throws std::runtime_error naming the
/// file of a malformed history.
RunResult check_run(const RunFacts& facts);

/// Liveness, in liveness.cpp.
void check_liveness(const RunFacts& facts, const Model& model, RunResult& result);

/// What the lock server held, against what the workers believed, in server_state.cpp.
void check_server_state(const RunFacts& facts, const Model& model, RunResult& result);

/// First come, first served (fair lock), in fifo.cpp.
void check_fifo(const RunFacts& facts, const Model& model, RunResult& result);

/// Counts an anomaly among `holds` (of one lock) as expected, if a fault
/// during any of them explains it, or as a violation, with a finding; true
/// for a violation.
bool judge(const RunFacts& facts, const Model& m, RunResult& r, Tally& tally, const std::string& kind,
           const std::vector<const Hold*>& holds, Excusable how, const std::string& what);

/// "hold 3.12 (worker 3, 1.200s..1.450s)", for findings.
std::string describe(const RunFacts& facts, const Hold& hold);

/// Adds a finding, keeping at most a few per kind so a bad run stays readable.
void add_finding(RunResult& result, const std::string& kind, const std::string& text);

}  // namespace holdfast::check
