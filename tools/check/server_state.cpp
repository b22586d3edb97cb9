// What the lock server held, judged against what the workers believed: from
// the witness's reads during the run, the sweep after it, and the messages
// the unlock listener heard. Keys that should carry a lease and have none,
// semaphore permits that do not add up, holds no worker believes it has, and
// unlocks announced by releases that did not happen.
#include <algorithm>
#include <map>
#include <set>

#include "checker.hpp"
#include "group_layout.hpp"

namespace holdfast::check {
namespace {

// How late the listener may hear a message after the release that published it returned.
constexpr Nanos heard_slack = 100'000'000;

// Keys that need no expiry by design: a semaphore's count, a permit-expirable
// semaphore's ids (each scored by its lease's end), a fair lock's queue,
// deadlines and liveness records (each entry with a deadline of its own), a
// fenced lock's token counter. Every other key holdfast writes carries a
// lease: a lock's hash, a read hold's key, the waiters' list, a handoff
// promise; an unknown key without expiry is reported too, so that a new kind
// of key is classified here on purpose.
bool needs_no_expiry(const SweptKey& k) {
    if (k.type == "string" && k.key.starts_with(lock_name(0).substr(0, lock_name(0).size() - 1))) return true;
    if (k.key.starts_with("{") && k.key.ends_with("}:timeout")) return true;
    for (const char* prefix : {"redisson_lock_queue:", "redisson_lock_timeout:", "holdfast_fair_alive:",
                               "redisson_lock_token:"})
        if (k.key.starts_with(prefix)) return true;
    return false;
}

bool is_lock_key(const SweptKey& k, int lock) { return k.key == lock_name(lock); }

int lock_of_key(const RunFacts& facts, const SweptKey& k) {
    for (int lock = 0; lock < facts.locks; ++lock)
        if (is_lock_key(k, lock)) return lock;
    return -1;
}

// During the run (the witness saw a lock's hash with PTTL -1: each stretch of
// such reads counts once) and after it (the sweep).
void check_expiry(const RunFacts& facts, const Model& m, RunResult& r) {
    std::vector<bool> open(facts.locks, false);  // the last read of the lock found it without expiry
    for (int lock = 0; lock < facts.locks; ++lock)
        for (const Sample& s : m.samples[lock]) {
            const bool unleased = s.type == "hash" && s.pttl == -1;
            if (unleased && !open[lock]) {
                ++r.keys_without_expiry;
                std::string owners;
                for (const auto& f : s.fields) owners += " " + f;
                add_finding(r, "key without expiry", lock_name(lock) + " (a lock's hash, held by" + owners +
                                                         ") had no expiry on :" + std::to_string(s.port) + " at " +
                                                         at(facts, s.time));
            }
            open[lock] = unleased;
        }
    for (const SweptKey& k : m.swept) {
        if (k.unleased > 0) {
            ++r.keys_without_expiry;
            add_finding(r, "key without expiry", std::to_string(k.unleased) + " permit(s) of " + k.key +
                                                     " without a lease after the run, on :" + std::to_string(k.port));
        }
        if (k.pttl != -1 || needs_no_expiry(k)) continue;
        const int lock = lock_of_key(facts, k);
        if (lock >= 0 && open[lock]) continue;  // the witness's last read counted it already
        ++r.keys_without_expiry;
        add_finding(r, "key without expiry",
                    k.key + " (" + k.type + ") had no expiry after the run, on :" + std::to_string(k.port));
    }
}

// Faults that may lose a semaphore's writes (a restart without persistence,
// a failover: asynchronous replication), so that its plain count need not
// add up after them.
bool loses_writes(const Model& m) {
    return std::any_of(m.faults.begin(), m.faults.end(),
                       [](const Fault& f) { return f.kind == Nemesis::restart_volatile || fails_over(f.kind); });
}

// A permit-expirable semaphore lists every permit held, so at every instant
// its free count plus its listed ids is the number configured (each script
// changes both, and replicas receive a script's writes together): checked on
// every read of the witness (each stretch of wrong reads counts once, by the
// permits it was short or over) and after the run.
void check_listed_permits(const RunFacts& facts, const Model& m, RunResult& r) {
    for (int lock = 0; lock < facts.locks; ++lock) {
        std::int64_t wrong = 0;  // permits short (or over) in the current stretch
        for (const Sample& s : m.samples[lock]) {
            const std::int64_t off = s.type == "string" && s.free >= 0 ? facts.permits - (s.free + s.held) : 0;
            if (off != 0 && wrong == 0) {
                r.lost_permits.violations += std::abs(off);
                add_finding(r, "lost permits",
                            lock_name(lock) + " had " + std::to_string(s.free) + " free and " + std::to_string(s.held) +
                                " held of " + std::to_string(facts.permits) + " permits on :" +
                                std::to_string(s.port) + " at " + at(facts, s.time));
            }
            wrong = off;
        }
        std::int64_t free = -1, held = 0;
        for (const SweptKey& k : m.swept) {
            if (is_lock_key(k, lock) && k.type == "string") free = std::stoll(k.value);
            if (k.key == "{" + lock_name(lock) + "}:timeout") held = k.members;
        }
        if (free < 0 || free + held == facts.permits || wrong != 0) continue;  // a stretch still open counted it
        r.lost_permits.violations += std::abs(facts.permits - free - held);
        add_finding(r, "lost permits", lock_name(lock) + " had " + std::to_string(free) + " free and " +
                                           std::to_string(held) + " held of " + std::to_string(facts.permits) +
                                           " permits after the run");
    }
}

// A plain semaphore keeps no record of its holders: after the run its count
// must be what the workers left, the configured permits less those still
// taken (by a holder killed, or whose release was refused), give or take one
// per call of unknown outcome.
void check_counted_permits(const RunFacts& facts, const Model& m, RunResult& r) {
    for (const SweptKey& k : m.swept) {
        const int lock = lock_of_key(facts, k);
        if (lock < 0 || k.type != "string") continue;
        std::int64_t kept = 0, unknown = 0;
        for (const Hold& h : m.holds[lock]) {
            kept += h.release == Phase::invoke || (h.release == Phase::fail && !h.unconfirmed());
            unknown += h.release == Phase::unknown;
        }
        for (const Attempt& a : m.attempts[lock]) unknown += a.outcome == Phase::unknown;
        const std::int64_t free = std::stoll(k.value);
        const std::int64_t lost = facts.permits - kept - free;
        if (lost >= 0 && lost <= unknown) continue;
        const std::int64_t off = lost > 0 ? lost - unknown : -lost;
        if (loses_writes(m) && !facts.strict) {
            r.lost_permits.expected += off;
            continue;
        }
        r.lost_permits.violations += off;
        add_finding(r, "lost permits", lock_name(lock) + " had " + std::to_string(free) + " free permits after the run; " +
                                           std::to_string(facts.permits) + " configured, " + std::to_string(kept) +
                                           " still taken (holders killed or refused their release), " +
                                           std::to_string(unknown) + " call(s) of unknown outcome");
    }
}

// Whether `worker` may, as far as it knows, still hold `lock` at `t` (or
// have left a hold of it behind): a hold it did not release ok (a refused
// release keeps it until its lease ends), or an acquire of unknown outcome,
// within a lease and a timeout before `t`.
bool may_hold(const RunFacts& facts, const Model& m, int worker, int lock, Nanos t) {
    const Nanos since = t - to_ns(facts.lease + facts.timeout);
    for (const Hold& h : m.holds[lock])
        if (h.worker == worker && h.ack <= t && h.release != Phase::ok && !h.unconfirmed() &&
            (h.release == Phase::invoke || h.released >= since))
            return true;
    for (const Attempt& a : m.attempts[lock])
        if (a.worker == worker && a.invoke <= t && a.outcome == Phase::unknown && a.done >= since) return true;
    return false;
}

// A hold on the server that no worker believes it has. During the run: the
// owner's field read by the witness a client timeout or more after its
// acquire failed (a refusal: it was told it holds nothing, and any hold given
// back by then), before its next try of that lock. After the run: a field
// whose worker exited believing it held nothing there.
void check_unbelieved(const RunFacts& facts, const Model& m, RunResult& r) {
    if (facts.semaphore()) return;  // permits have no owner
    std::map<std::string, int> worker_of;
    for (const auto& attempts : m.attempts)
        for (const Attempt& a : attempts) worker_of[a.owner] = a.worker;
    for (int lock = 0; lock < facts.locks; ++lock)
        for (const Attempt& a : m.attempts[lock]) {
            if (a.outcome != Phase::fail || a.owner.empty() || may_hold(facts, m, a.worker, lock, a.invoke)) continue;
            Nanos next = facts.stop;
            for (const Attempt& b : m.attempts[lock])
                if (b.worker == a.worker && b.invoke > a.done) next = std::min(next, b.invoke);
            for (const Sample& s : m.samples[lock]) {
                if (s.time < a.done + to_ns(facts.timeout) || s.answered >= next ||
                    !shows_hold(facts, s.fields, a.owner, a.access))
                    continue;
                ++r.unbelieved_holds.violations;
                add_finding(r, "hold nobody believes",
                            lock_name(lock) + " held by worker " + std::to_string(a.worker) + "'s owner on :" +
                                std::to_string(s.port) + " at " + at(facts, s.time) + ", " +
                                std::to_string((s.time - a.done) / 1'000'000) + " ms after its acquire failed (" +
                                a.message + ")");
                break;
            }
        }
    const auto killed = [&](int worker) {
        return std::any_of(facts.killed.begin(), facts.killed.end(), [&](const auto& k) { return k.first == worker; });
    };
    for (const SweptKey& k : m.swept) {
        const int lock = lock_of_key(facts, k);
        if (lock < 0 || k.type != "hash") continue;
        std::set<std::string> owners;  // a writer that also reads has two fields, a group's holder one a value
        for (std::string field : k.fields) {
            if (field.ends_with(":write")) field.resize(field.size() - 6);
            if (facts.primitive == Primitive::group) field = holder_of(field);  // "<owner>=<value>"
            if (!owners.insert(field).second) continue;
            const auto found = worker_of.find(field);
            // A hold whose release was refused near the end may still be there, its lease running.
            if (found == worker_of.end() || killed(found->second) || may_hold(facts, m, found->second, lock, facts.stop))
                continue;
            ++r.unbelieved_holds.violations;
            add_finding(r, "hold nobody believes", lock_name(lock) + " still held by worker " +
                                                       std::to_string(found->second) + "'s owner on :" +
                                                       std::to_string(k.port) +
                                                       " after the run, which it exited believing it did not hold");
        }
    }
}

// An unlock announced by a release that did not happen: a message on a
// lock's channels heard while a release of it was being refused ("nothing
// changed"), with no other release of that lock under way and no other
// acquire of it refused meanwhile (a refused or unconfirmed acquire gives
// its hold back, which announces it). The refused holder still held the
// lock, so nothing else could have freed it. Not for a semaphore, whose
// acquires announce permits they reclaim.
void check_false_unlocks(const RunFacts& facts, const Model& m, RunResult& r) {
    if (facts.semaphore()) return;
    std::set<std::string> counted;  // releases found announcing (a targeted wake-up is two messages)
    for (const Heard& heard : m.heard) {
        if (heard.lock < 0 || heard.lock >= facts.locks) continue;
        const auto& holds = m.holds[heard.lock];
        const auto in = [&](Nanos from, Nanos to) { return from <= heard.time && heard.time <= to + heard_slack; };
        const auto refused = std::find_if(holds.begin(), holds.end(), [&](const Hold& h) {
            return h.refused() && in(h.end, h.released);
        });
        if (refused == holds.end() || !counted.insert(refused->id()).second) continue;
        const bool other_release = std::any_of(holds.begin(), holds.end(), [&](const Hold& h) {
            return &h != &*refused && h.release != Phase::invoke && in(h.end, h.released);
        });
        const bool other_refusal = std::any_of(m.attempts[heard.lock].begin(), m.attempts[heard.lock].end(),
                                               [&](const Attempt& a) {
                                                   return a.outcome != Phase::ok && a.message != "timed out" &&
                                                          in(a.invoke, a.done);
                                               });
        if (other_release || other_refusal) continue;
        ++r.false_unlocks;
        add_finding(r, "false unlock", heard.channel + " announced '" + heard.payload + "' at " +
                                           at(facts, heard.time) + " while the release of " +
                                           describe(facts, *refused) + " was refused: " + refused->release_error);
    }
}

}  // namespace

void check_server_state(const RunFacts& facts, const Model& model, RunResult& result) {
    check_expiry(facts, model, result);
    if (facts.primitive == Primitive::expirable) check_listed_permits(facts, model, result);
    if (facts.primitive == Primitive::semaphore) check_counted_permits(facts, model, result);
    check_unbelieved(facts, model, result);
    check_false_unlocks(facts, model, result);
}

}  // namespace holdfast::check
