#include "checker.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace holdfast::check {

std::string describe(const RunFacts& facts, const Hold& h) {
    return "hold " + h.id() + " (worker " + std::to_string(h.worker) + ", " + (h.shared() ? "read, " : "") +
           at(facts, h.ack) + ".." + at(facts, h.end) + (h.token >= 0 ? ", token " + std::to_string(h.token) : "") +
           (h.lost ? ", told " + at(facts, h.lost) : "") + ")";
}

namespace {

constexpr int findings_per_kind = 3;

// Whether the earlier holder `a` was told it had lost the lock before `b`'s
// acquire returned, or `b` at its return (its grant reached it only after its
// lease had run out).
bool told(const Hold& a, const Hold& b) { return (a.lost > 0 && a.lost <= b.ack) || (b.lost > 0 && b.lost <= b.ack); }

// Hold `b` began while `a`, granted earlier, had not ended, and a fault cut
// one of them off (cut_off: a partition, a narrowed ACL, a paused replica).
// The library must tell a cut-off holder that its hold is lost before anyone
// else can take the lock: "told" if it did (a's `lost` before b's ack; or b's
// at its ack, b's grant having reached it too late), an untold overlap, a
// violation, if not (unless another fault, a pause, explains it). Told
// overlaps are what fencing is for: not failed.
void judge_cut_off(const RunFacts& facts, const Model& m, RunResult& r, const Hold& a, const Hold& b) {
    const Fault* a_cut = cut_off(m, a);
    const Fault* b_cut = cut_off(m, b);
    const bool a_told = a_cut && a.lost > 0 && a.lost <= b.ack;
    const bool b_told = b_cut && b.lost > 0 && b.lost <= b.ack;
    const std::string by = " (" + nemesis_name((a_cut ? a_cut : b_cut)->kind) + ")";
    if (a_told || b_told) {
        // --strict excuses nothing, this neither.
        if (facts.strict)
            judge(facts, m, r, r.overlaps, "told overlap", {&a, &b}, Excusable::by_lease_loss,
                  "two holders of " + lock_name(b.lock) + " at once, the one cut off" + by + " told it had lost it");
        return;
    }
    judge(facts, m, r, r.overlaps, "untold overlap", {&a, &b}, Excusable::by_lease_loss,
          "two holders of " + lock_name(b.lock) + " at once, the one cut off" + by + " not told it had lost it");
}

// Mutual exclusion: no two holds of a lock overlap unless both are shared
// (read holds of a ReadWriteLock) or take no value in common (a group lock's); no more than N holds of an N-permit
// semaphore overlap.
void check_overlaps(const RunFacts& facts, const Model& m, RunResult& r) {
    for (const auto& holds : m.holds)
        for (std::size_t j = 0; j < holds.size(); ++j) {
            const Hold& h = holds[j];
            std::vector<const Hold*> others;  // earlier grants still held when h was granted, that exclude it
            for (std::size_t i = 0; i < j; ++i)
                if (holds[i].end > h.ack && holds[i].conflicts(h)) others.push_back(&holds[i]);
            if (facts.semaphore()) {
                if (static_cast<std::int64_t>(others.size()) < facts.permits) continue;
                others.push_back(&h);
                judge(facts, m, r, r.overlaps, "overlap", others, Excusable::by_lease_loss,
                      std::to_string(others.size()) + " holders of the " + std::to_string(facts.permits) +
                          " permits of " + lock_name(h.lock) + " at once");
                continue;
            }
            for (const Hold* other : others) {
                ++(told(*other, h) ? r.told : r.untold);
                if (cut_off(m, *other) || cut_off(m, h)) {
                    judge_cut_off(facts, m, r, *other, h);
                    continue;
                }
                judge(facts, m, r, r.overlaps, "overlap", {other, &h}, Excusable::by_lease_loss,
                      "two holders of " + lock_name(h.lock) + " at once");
            }
        }
}

// Lost updates, stale writes and integrity, from the resource's own log.
void check_resource(const RunFacts& facts, const Model& m, int lock, RunResult& r) {
    const ResourceState& state = facts.resources[lock];
    // Fencing exists to stop these, and no fault excuses them then: tokens
    // start from the server's clock, so not even a lost counter makes them go back.
    const Excusable excusable = facts.fenced() ? Excusable::by_nothing : Excusable::by_lease_loss;
    std::map<std::string, std::size_t> read_at;  // hold -> log position of its read
    std::int64_t current = 0;
    // Grant order: the token under fencing, the acquire's return otherwise.
    auto rank = [&](const Hold& h) { return facts.fenced() ? h.token : h.ack; };
    const Hold* newest = nullptr;  // highest-ranked hold the resource has accepted an operation of
    for (std::size_t i = 0; i < state.log.size(); ++i) {
        const auto& entry = state.log[i];
        const auto found = m.by_id.find(entry.hold);
        if (found == m.by_id.end()) {
            ++r.integrity;
            add_finding(r, "integrity", "the resource accepted an operation of " + entry.hold +
                                            ", which never held " + lock_name(lock));
            continue;
        }
        const Hold& h = *found->second;
        if (entry.kind == 'a') continue;  // a semaphore's hold only adds itself to the set: no counter
        if (entry.kind == 'r') read_at[entry.hold] = i;
        if (entry.kind == 'w') {
            if (entry.value != current + 1) {
                // Every write since this hold's read was overwritten.
                const std::size_t from = read_at.count(entry.hold) ? read_at[entry.hold] : 0;
                for (std::size_t j = from + 1; j < i; ++j) {
                    if (state.log[j].kind != 'w' || !m.by_id.count(state.log[j].hold)) continue;
                    judge(facts, m, r, r.lost_updates, "lost update", {&h, m.by_id.at(state.log[j].hold)}, excusable,
                          lock_name(lock) + ": " + entry.hold + " wrote " + std::to_string(entry.value) +
                              " computed from a stale read, over " + std::to_string(current) + " written by " +
                              state.log[j].hold);
                }
            }
            current = entry.value;
            if (newest && newest != &h && rank(h) < rank(*newest))
                judge(facts, m, r, r.stale_writes, "stale write", {&h, newest}, excusable,
                      lock_name(lock) + ": the resource accepted a write from a superseded holder");
        }
        if (!newest || rank(h) > rank(*newest)) newest = &h;
    }
    if (current != state.counter) {
        ++r.integrity;
        add_finding(r, "integrity", lock_name(lock) + ": counter is " + std::to_string(state.counter) +
                                        " but its log ends at " + std::to_string(current));
    }
    // Every acknowledged write is in the resource; every writer there wrote.
    std::set<std::string> invoked;
    for (const Event& e : m.events) {
        if (e.op != Op::write || e.lock != lock) continue;
        const std::string id = hold_id(e.worker, e.hold);
        if (e.phase == Phase::invoke) invoked.insert(id);
        if (e.phase == Phase::ok && !state.writers.count(id)) {
            ++r.integrity;
            add_finding(r, "integrity", lock_name(lock) + ": acknowledged write of " + id + " is not in the resource");
        }
    }
    for (const std::string& id : state.writers)
        if (!invoked.count(id)) {
            ++r.integrity;
            add_finding(r, "integrity", lock_name(lock) + ": " + id + " is a writer but never invoked a write");
        }
}

// Fencing tokens rise in grant order: a hold granted after another returned
// (its acquire began after the other's ended) has a larger token.
void check_tokens(const RunFacts& facts, const Model& m, RunResult& r) {
    for (const auto& holds : m.holds) {
        // holds are sorted by ack: the largest token among those acked before `invoke`.
        std::vector<const Hold*> best(holds.size());
        for (std::size_t i = 0; i < holds.size(); ++i)
            best[i] = i && best[i - 1]->token > holds[i].token ? best[i - 1] : &holds[i];
        for (const Hold& h : holds) {
            const auto n = std::lower_bound(holds.begin(), holds.end(), h.invoke,
                                            [](const Hold& x, Nanos t) { return x.ack < t; }) - holds.begin();
            // No fault excuses it: tokens start from the server's clock, so
            // even a restart that lost the counter cannot make them go back.
            if (n == 0 || best[n - 1]->token < h.token) continue;
            ++r.token_order.violations;
            add_finding(r, "token order", "token did not rise: " + describe(facts, *best[n - 1]) + " then " +
                                              describe(facts, h));
        }
    }
}

// A failover during the hold's release: the old master may have taken it,
// and the promoted replica may never see it.
bool released_in_failover(const Model& m, const Hold& h) {
    return std::any_of(m.faults.begin(), m.faults.end(), [&](const Fault& f) {
        return fails_over(f.kind) && f.start <= h.released && f.end >= h.end;
    });
}

// A release of `h` that returned ok although the server kept the hold, as
// seen at `seen`: expected only under a failover with replica sync off
// (asynchronous replication); with replica sync the release must have been
// confirmed by a replica, or reported.
void lost_release(const RunFacts& facts, const Model& m, RunResult& r, const Hold& h, Nanos seen,
                  const std::string& evidence) {
    const bool failover = std::any_of(m.faults.begin(), m.faults.end(), [&](const Fault& f) {
        return fails_over(f.kind) && f.start <= seen && f.end >= h.end;
    });
    if (failover && !facts.replicas_synced && !facts.strict) {
        ++r.lost_releases.expected;
        return;
    }
    ++r.lost_releases.violations;
    add_finding(r, "lost release", lock_name(h.lock) + ": the release of " + describe(facts, h) + " returned ok at " +
                                       at(facts, h.released) + ", but " + evidence);
}

// Lost releases, seen two ways. The holder's own hold-count probe, right
// after its release, read a count on the master it reached, the release
// having met a failover (elsewhere that is a leaked hold). Or the witness read
// the holder's owner field in the lock's hash on a master afterwards: a read
// sent after the release had returned and answered before the holder called
// acquire on that lock again (which may take it back). Reads of a node a
// failover was deposing, while it did, do not count: it is no longer the
// master that matters, and its data is about to go.
void check_lost_releases(const RunFacts& facts, const Model& m, RunResult& r) {
    if (facts.semaphore()) return;  // permits have no owner
    for (int lock = 0; lock < facts.locks; ++lock) {
        const auto& samples = m.samples[lock];
        for (const Hold& h : m.holds[lock]) {
            if (h.release != Phase::ok) continue;
            if (h.left_after_release > 0) {
                if (released_in_failover(m, h))
                    lost_release(facts, m, r, h, h.released,
                                 "its own probe right after still read " + std::to_string(h.left_after_release) +
                                     " hold(s) on the master it reached");
                continue;
            }
            if (h.owner.empty()) continue;
            Nanos next_try = std::numeric_limits<Nanos>::max();
            for (const Attempt& a : m.attempts[lock])
                if (a.worker == h.worker && a.invoke > h.end) next_try = std::min(next_try, a.invoke);
            const auto from = std::upper_bound(samples.begin(), samples.end(), h.released,
                                               [](Nanos t, const Sample& s) { return t < s.time; });
            for (auto s = from; s != samples.end() && s->time < next_try; ++s) {
                if (s->answered >= next_try) continue;  // it may have run after the next acquire
                const bool deposed = std::any_of(m.faults.begin(), m.faults.end(), [&](const Fault& f) {
                    return f.start <= s->time && s->time <= f.end && deposed_port(f) == s->port;
                });
                // A group lock's owner may still hold other values (a set whose release was refused).
                if (deposed || !shows_hold(facts, s->fields, h.owner, h.access, h.values)) continue;
                lost_release(facts, m, r, h, s->time,
                             "the owner's field was still on :" + std::to_string(s->port) + " at " +
                                 at(facts, s->time) + ", " + std::to_string((s->time - h.released) / 1'000'000) +
                                 " ms later");
                break;
            }
        }
    }
}

}  // namespace

bool judge(const RunFacts& facts, const Model& m, RunResult& r, Tally& tally, const std::string& kind,
           const std::vector<const Hold*>& holds, Excusable how, const std::string& what) {
    for (const Hold* h : holds)
        if (excuse(facts, m, h->window(), how)) {
            ++tally.expected;
            return false;
        }
    ++tally.violations;
    std::string text = what + ":";
    for (std::size_t i = 0; i < holds.size(); ++i)
        text += (i == 0 ? " " : i + 1 == holds.size() ? " and " : ", ") + describe(facts, *holds[i]);
    add_finding(r, kind, text);
    return true;
}

long RunResult::violations() const {
    return overlaps.violations + lost_releases.violations + lost_updates.violations + stale_writes.violations +
           token_order.violations + fifo.violations + leaked_holds + renewed_after_release + integrity +
           worker_failures + slow_regrants + slow_wakeups + stuck + keys_without_expiry + lost_permits.violations +
           unbelieved_holds.violations + false_unlocks;
}

void add_finding(RunResult& result, const std::string& kind, const std::string& text) {
    const auto same = std::count_if(result.findings.begin(), result.findings.end(),
                                    [&](const std::string& f) { return f.starts_with(kind + ": "); });
    if (same < findings_per_kind) result.findings.push_back(kind + ": " + text);
}

RunResult check_run(const RunFacts& facts) {
    const Model m = build_model(facts);
    RunResult r;
    r.dir = facts.dir;
    r.faults = static_cast<long>(m.faults.size());
    r.writes_acked = m.writes_acked;
    r.refused = m.reads_refused + m.writes_refused;
    for (const auto& attempts : m.attempts)
        for (const Attempt& a : attempts) {
            ++r.attempts;
            r.granted += a.outcome == Phase::ok;
            r.unknown += a.outcome == Phase::unknown;
        }
    for (const Event& e : m.events) {
        if (e.op == Op::acquire && e.phase == Phase::fail && e.message == "timed out") ++r.timed_out;
        if (e.op == Op::release && e.phase == Phase::fail && e.message.find("does not hold") != std::string::npos)
            ++r.lost_leases;
        if (e.op == Op::renewed) {
            ++r.renewed_after_release;
            add_finding(r, "renewed after release",
                        lock_name(e.lock) + " hold " + hold_id(e.worker, e.hold) +
                            " still renewed by its watchdog after its release was tried, at " + at(facts, e.time));
        }
    }
    // A release the old master ran and then lost in a failover: the promoted
    // replica still counts the hold until its lease ends. A lost release
    // (check_lost_releases), not a leak.
    for (const auto& holds : m.holds)
        for (const Hold& h : holds)
            if (h.left_after_release > 0 && !released_in_failover(m, h)) {
                ++r.leaked_holds;
                add_finding(r, "leaked hold", lock_name(h.lock) + " still counted " +
                                                  std::to_string(h.left_after_release) + " hold(s) of worker " +
                                                  std::to_string(h.worker) + " after its release of " +
                                                  describe(facts, h));
            }
    // Releases that met a slot migration: invoked while their lock's slot was
    // migrating (from MIGRATING to the last SETSLOT NODE).
    for (const Fault& f : m.faults)
        if (f.kind == Nemesis::cluster_migrate_slot)
            r.releases_in_migration += std::count_if(m.events.begin(), m.events.end(), [&](const Event& e) {
                return e.op == Op::release && e.phase == Phase::invoke && e.lock == f.lock && e.time >= f.start &&
                       e.time <= f.end;
            });
    for (const std::string& failure : facts.worker_failures) {
        ++r.worker_failures;
        add_finding(r, "worker", failure);
    }
    check_overlaps(facts, m, r);
    check_lost_releases(facts, m, r);
    for (int lock = 0; lock < facts.locks; ++lock) check_resource(facts, m, lock, r);
    if (facts.fenced()) check_tokens(facts, m, r);
    if (is_fair(facts.primitive)) check_fifo(facts, m, r);
    check_liveness(facts, m, r);
    check_server_state(facts, m, r);
    return r;
}

}  // namespace holdfast::check
