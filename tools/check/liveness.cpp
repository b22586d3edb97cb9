// Liveness: measured everywhere, counted as a violation only where promised.
#include <algorithm>
#include <initializer_list>
#include <limits>

#include "checker.hpp"

namespace holdfast::check {
namespace {

constexpr Nanos wakeup_promise = 100'000'000;  // 100 ms from unlock to the next grant
constexpr Nanos regrant_slack = 1'000'000'000;  // re-grant within lease + 1 s of a holder's death
constexpr Nanos failover_wakeup_promise = 3'000'000'000;  // waiters behind a failover: 3 s from the release

// The first hold of `holds` (sorted by ack) acked after `t`, or nullptr.
const Hold* first_grant_after(const std::vector<Hold>& holds, Nanos t) {
    const auto it = std::upper_bound(holds.begin(), holds.end(), t, [](Nanos v, const Hold& h) { return v < h.ack; });
    return it == holds.end() ? nullptr : &*it;
}

// Config::retry_interval and retry_interval_max, as the workers run.
constexpr Nanos first_reconnect = 50'000'000;
constexpr Nanos longest_reconnect = 2'000'000'000;

// How long after `f` ends a client may still be reconnecting. Its delay
// doubles while the server is down, so the attempt after the server's
// return comes up to the outage (plus the first delay) later: twice the
// outage from its end covers the connect and the first command too.
Nanos reconnecting_after(const Fault& f) {
    switch (f.kind) {
        case Nemesis::kill_connections:
        case Nemesis::kill_pubsub:
        case Nemesis::restart_persistent:
        case Nemesis::restart_volatile:
        case Nemesis::sentinel_kill_master:
        case Nemesis::cluster_kill_primary:
        case Nemesis::cluster_kill_primary_waiting:
            return std::min(longest_reconnect, 2 * (f.end - f.start) + first_reconnect);
        default: return 0;
    }
}

// A fault not of the kinds `ignore` touching [from, to], widened by `after`
// (and by its clients' reconnecting) past its end.
const Fault* fault_near(const Model& m, Nanos from, Nanos to, Nanos after, std::initializer_list<Nemesis> ignore) {
    for (const Fault& f : m.faults)
        if (std::find(ignore.begin(), ignore.end(), f.kind) == ignore.end() && f.start <= to &&
            f.end + after + reconnecting_after(f) >= from)
            return &f;
    return nullptr;
}

// A partition cuts only its worker off, and a pause stops only its worker: it
// explains a slow wake-up only of that worker, waiting during it or catching
// up after it (reconnecting; or, resumed, its loop thread not yet scheduled:
// under ThreadSanitizer that took up to 670 ms, RELIABILITY.md finding 4).
bool hit_near(const Model& m, int worker, Nanos from, Nanos to, Nanos after) {
    return std::any_of(m.faults.begin(), m.faults.end(), [&](const Fault& f) {
        return (f.kind == Nemesis::partition_holder || f.kind == Nemesis::pause_holder) && f.worker == worker &&
               f.start <= to && f.end + after >= from;
    });
}

// A process killed while listed as a waiter of `lock` (kill-holder's target
// may be about to take it) can be the waiter a release promises the lock to:
// the live waiters, told of a handoff to another, check again only
// Config::lock_handoff_check (1 s) later (docs/lock.md). A listing outlives
// its process by up to its wait, so the kill may come before the release.
bool killed_near(const Model& m, int lock, Nanos from, Nanos to, Nanos after) {
    return std::any_of(m.faults.begin(), m.faults.end(), [&](const Fault& f) {
        return f.kind == Nemesis::kill_holder && f.lock == lock && f.start <= to && f.end + after >= from;
    });
}

// After a holder is SIGKILLed, its lock is granted again within lease + 1 s
// of the first moment someone waits for it. (A semaphore's permit has no
// lease: a dead holder keeps it.)
void check_regrants(const RunFacts& facts, const Model& m, RunResult& r) {
    if (facts.semaphore()) return;
    const Nanos bound = to_ns(facts.lease) + regrant_slack;
    for (const Fault& f : m.faults) {
        if (f.kind != Nemesis::kill_holder || f.lock < 0) continue;
        const auto& holds = m.holds[f.lock];
        const Hold* next = first_grant_after(holds, f.start);
        Nanos waiting = -1;
        for (const Attempt& a : m.attempts[f.lock])
            if (a.worker != f.worker && a.done > f.start && (!next || a.invoke <= next->ack))
                waiting = waiting < 0 ? a.invoke : std::min(waiting, a.invoke);
        if (waiting < 0) continue;  // nobody wanted it
        const Nanos from = std::max(f.start, waiting);
        const Nanos until = next ? next->ack : facts.stop;
        const Nanos latency = until - from;
        ++r.regrants;
        r.regrant_max = std::max(r.regrant_max, latency);
        if (latency <= bound ||
            fault_near(m, f.start, until, 0, {Nemesis::kill_holder}) != nullptr)
            continue;
        ++r.slow_regrants;
        add_finding(r, "slow re-grant",
                    lock_name(f.lock) + ": worker " + std::to_string(f.worker) + " was killed holding it at " +
                        at(facts, f.start) + "; " + (next ? "granted again " : "not granted again before the stop, ") +
                        std::to_string(latency / 1'000'000) + " ms after someone waited (promise: lease + 1 s)");
    }
}

// Until when the server may still count a hold: its release; a lease past the
// end of a holder that died or whose release had an unknown outcome (a
// semaphore's permit: for good).
Nanos held_until(const RunFacts& facts, const Hold& h) {
    if (h.release == Phase::ok || h.release == Phase::fail) return h.released;
    if (facts.semaphore()) return std::numeric_limits<Nanos>::max();
    return std::max(h.end, h.released) + to_ns(facts.lease);
}

// How long the machine stalled (StallMonitor) within [from, to].
Nanos stalled_within(const RunFacts& facts, Nanos from, Nanos to) {
    Nanos stalled = 0;
    for (const Stall& s : facts.stalls)
        if (s.from < to && s.to > from) stalled += std::min(s.to, to) - std::max(s.from, from);
    return stalled;
}

// After an unlock that frees the lock (or a semaphore's permit) with someone
// waiting, it is granted again (to anyone) within 100 ms. Measured from the
// release's return to the next grant, where another worker waited from before
// the release was called until after it returned, and one of them still
// waited at that grant (if all gave up first, the unavailability check sees
// the window). So the maximum is the longest wake-up after a release.
void check_wakeups(const RunFacts& facts, const Model& m, RunResult& r) {
    const Nanos shadow = to_ns(facts.lease + facts.timeout + facts.queue_budget());
    for (int lock = 0; lock < facts.locks; ++lock) {
        const auto& holds = m.holds[lock];
        for (const Hold& h : holds) {
            if (h.release != Phase::ok || h.left_after_release > 0) continue;  // still held: nothing to wake
            // Other readers, or N holders of a semaphore, may still keep the waiters out.
            const auto still_held = std::count_if(holds.begin(), holds.end(), [&](const Hold& o) {
                return &o != &h && o.ack < h.released && held_until(facts, o) > h.released;
            });
            if (still_held >= facts.permits) continue;
            const Hold* next = first_grant_after(holds, h.end);
            if (!next) continue;
            const Attempt* first_out = nullptr;  // of the waiters still there at the grant, the first to finish
            for (const Attempt& a : m.attempts[lock])
                if (a.worker != h.worker && a.invoke < h.end && a.done > h.released && a.done >= next->ack &&
                    (!first_out || a.done < first_out->done))
                    first_out = &a;
            if (!first_out) continue;
            const Nanos latency = std::max<Nanos>(0, next->ack - h.released);
            r.wakeups_ms.push_back(double(latency) / 1e6);
            if (latency <= wakeup_promise ||
                fault_near(m, h.end, next->ack, shadow,
                           {Nemesis::kill_holder, Nemesis::pause_holder, Nemesis::partition_holder}) ||
                hit_near(m, first_out->worker, h.end, next->ack, shadow) ||
                killed_near(m, lock, h.end, next->ack, shadow))
                continue;
            // Late only by time the machine took from everyone: no finding, counted apart.
            if (latency - stalled_within(facts, h.released, next->ack) <= wakeup_promise) {
                ++r.stalled_wakeups;
                continue;
            }
            ++r.slow_wakeups;
            add_finding(r, "slow wake-up", lock_name(lock) + " released by worker " + std::to_string(h.worker) +
                                               " at " + at(facts, h.released) + ", granted again only " +
                                               std::to_string(latency / 1'000'000) + " ms later while " +
                                               std::to_string(first_out->worker) + " waited (promise: 100 ms)");
        }
    }
}

// Permits of a semaphore that may be gone for good by `t`: one per holder
// killed, per acquire or release of unknown outcome (a permit taken or kept
// unseen), and all of them after a restart that lost the count; a plain
// semaphore's, also one per release refused (its permit stays taken: no
// owner, no lease), as the sweep counts them (check_counted_permits).
std::int64_t permits_maybe_lost(const RunFacts& facts, const Model& m, int lock, Nanos t) {
    std::int64_t lost = 0;
    for (const Fault& f : m.faults) {
        if (f.start > t) continue;  // a kill at t itself ends a hold and may open the window
        if (f.kind == Nemesis::restart_volatile || fails_over(f.kind)) lost += facts.permits;
        if (f.kind == Nemesis::kill_holder && f.lock == lock) ++lost;
    }
    for (const Attempt& a : m.attempts[lock]) lost += a.done < t && a.outcome == Phase::unknown;
    for (const Hold& h : m.holds[lock]) {
        lost += h.released < t && h.release == Phase::unknown;
        // From the release's call on: its hold's end may open the window, the refusal coming after.
        lost += facts.primitive == Primitive::semaphore && h.end <= t && h.refused();
    }
    return lost;
}

// Windows in which someone waits for a lock and nobody holds it. One that
// lasts past every fault by more than two leases plus a timeout (plus a fair
// lock's wait budget) is stuck, unless a semaphore may have lost every permit.
void check_unavailability(const RunFacts& facts, const Model& m, RunResult& r) {
    const Nanos bound = to_ns(2 * facts.lease + facts.timeout + facts.queue_budget()) + 2'000'000'000;
    for (int lock = 0; lock < facts.locks; ++lock) {
        // (time, order, delta waiting, delta holding); holds start before waits end at the same instant.
        std::vector<std::tuple<Nanos, int, int, int>> steps;
        for (const Attempt& a : m.attempts[lock]) {
            steps.emplace_back(a.invoke, 1, 1, 0);
            steps.emplace_back(a.done, 2, -1, 0);
        }
        for (const Hold& h : m.holds[lock]) {
            steps.emplace_back(h.ack, 0, 0, 1);
            steps.emplace_back(h.end, 3, 0, -1);
        }
        std::sort(steps.begin(), steps.end());
        int waiting = 0, holding = 0;
        Nanos open = -1;
        for (const auto& [t, order, dw, dh] : steps) {
            waiting += dw;
            holding += dh;
            const bool unavailable = waiting > 0 && holding == 0;
            if (unavailable && open < 0) open = t;
            if (unavailable || open < 0) continue;
            const Nanos end = std::min(t, facts.stop);
            if (end > open) {
                r.longest_unavailable = std::max(r.longest_unavailable, end - open);
                Nanos calm = open;  // after the last fault before the window closed
                for (const Fault& f : m.faults)
                    if (f.start <= end) calm = std::max(calm, f.end);
                if (end - calm > bound &&
                    !(facts.semaphore() && permits_maybe_lost(facts, m, lock, open) >= facts.permits)) {
                    ++r.stuck;
                    add_finding(r, "stuck", lock_name(lock) + " was free with waiters from " + at(facts, open) +
                                                " to " + at(facts, end) + ", " +
                                                std::to_string((end - calm) / 1'000'000) + " ms after the last fault");
                }
            }
            open = -1;
        }
    }
}

// After each failover: the longest gap between two successful acquires (of
// any lock; workers are always trying) that overlaps the fault. It runs from
// the last grant before the master stopped granting (the kill, or the
// demotion) to the first grant after the failover: how long waiters took to
// resume. A failover that no grant followed before the stop counts to the stop.
void measure_failover_resume(const RunFacts& facts, const Model& m, RunResult& r) {
    std::vector<Nanos> acks;
    for (const auto& holds : m.holds)
        for (const Hold& h : holds) acks.push_back(h.ack);
    std::sort(acks.begin(), acks.end());
    for (const Fault& f : m.faults) {
        if (!needs_sentinel(f.kind)) continue;
        auto it = std::lower_bound(acks.begin(), acks.end(), f.start);
        Nanos previous = it == acks.begin() ? f.start : *(it - 1);
        Nanos longest = 0;
        for (;; ++it) {
            const Nanos next = it == acks.end() ? facts.stop : *it;
            longest = std::max(longest, next - previous);
            if (it == acks.end() || next > f.end) break;
            previous = next;
        }
        r.resume_ms.push_back(double(longest) / 1e6);
    }
}

// cluster-kill-primary-waiting: workers slept waiting for a lock the nemesis
// held while the primary of its slot was killed; the nemesis released it once
// the replica was promoted, the old primary still down. Those still waiting
// then must be granted it within 3 s of that release: their subscriptions
// have to follow the slot to the promoted node (issue 19). A release that did
// not return ok (replica sync `required`, the promoted node having lost the
// replica the client saw it with: nothing can be granted there until one is
// back) counts from the fault's end instead, the old primary back as its replica.
void check_failover_wakeups(const RunFacts& facts, const Model& m, RunResult& r) {
    for (const Fault& f : m.faults) {
        if (f.kind != Nemesis::cluster_kill_primary_waiting || f.lock < 0) continue;
        const auto& holds = m.holds[f.lock];
        const auto held = std::find_if(holds.begin(), holds.end(), [&](const Hold& h) {
            return h.worker == f.worker && h.ack <= f.start && h.end >= f.start;
        });
        if (held == holds.end()) continue;
        const Nanos released = held->release == Phase::ok ? held->released : std::max(held->end, f.end);
        Nanos gave_up = -1;  // the last waiter's end, if none was granted
        bool waited = false;
        const Hold* next = first_grant_after(holds, held->end);
        // Every waiter that left before the next grant left with a connection
        // error: its call was failed by the outage (sent to the dead primary
        // before its client learned of the promotion), not asleep through the
        // release. It tries again, so the next grant, to anyone, is the measure.
        bool outage_ended_them = true;
        for (const Attempt& a : m.attempts[f.lock])
            if (a.worker != f.worker && a.invoke < held->end && a.done > released) {
                waited = true;
                gave_up = std::max(gave_up, a.done);
                if (a.outcome != Phase::unknown && (!next || a.done < next->ack)) outage_ended_them = false;
            }
        if (!waited) continue;
        const bool granted = next && (next->ack <= gave_up || outage_ended_them);
        const Nanos until = granted ? next->ack : gave_up;
        const Nanos latency = std::max<Nanos>(0, until - released);
        r.failover_wakeups_ms.push_back(double(latency) / 1e6);
        if (latency <= failover_wakeup_promise && granted) continue;
        ++r.slow_wakeups;
        add_finding(r, "slow wake-up after a failover",
                    lock_name(f.lock) + " released by the nemesis at " + at(facts, held->end) + " (" +
                        phase_name(held->release) +
                        (held->release == Phase::ok ? ")" : "; counted from the replica's return at " +
                                                                 at(facts, released) + ")") +
                        " after its primary was killed and replaced; " +
                        (granted ? "granted to a waiter only " : "no waiter granted it in ") +
                        std::to_string(latency / 1'000'000) + " ms later (promise: 3 s)");
    }
}

}  // namespace

void check_liveness(const RunFacts& facts, const Model& model, RunResult& result) {
    check_regrants(facts, model, result);
    check_wakeups(facts, model, result);
    check_unavailability(facts, model, result);
    measure_failover_resume(facts, model, result);
    check_failover_wakeups(facts, model, result);
}

}  // namespace holdfast::check
