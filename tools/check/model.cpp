#include "model.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace holdfast::check {
namespace {

using Key = std::pair<int, long>;  // worker, hold

// A client may still be reconnecting this long after a fault ends: its
// reconnect delay doubles up to Config::retry_interval_max (2 s).
constexpr Nanos reconnect_slack = 2'000'000'000;

// Faults that can lose a fair lock waiter's place, or delay its joining the
// queue beyond one reply: a restart (a volatile one loses the queue), a
// stalled server (waiters that cannot refresh their deadline are dropped),
// dropped connections (a waiter reconnects before its script runs).
bool loses_queue_places(Nemesis kind) {
    switch (kind) {
        case Nemesis::kill_connections:
        case Nemesis::pause_replica:  // replica sync `required`: a granted waiter's hold given back
        case Nemesis::pause_server:
        case Nemesis::debug_sleep:
        case Nemesis::restart_persistent:
        case Nemesis::restart_volatile:
        case Nemesis::sentinel_failover:
        case Nemesis::sentinel_failover_release:
        case Nemesis::sentinel_kill_master:
        case Nemesis::sentinel_hang:
        case Nemesis::cluster_failover:
        case Nemesis::cluster_kill_primary:
        case Nemesis::cluster_kill_primary_waiting:
            return true;
        default:
            return false;
    }
}

}  // namespace

std::string at(const RunFacts& facts, Nanos t) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3fs", double(t - facts.start) / 1e9);
    return text;
}

Model build_model(const RunFacts& facts) {
    Model m;
    m.events = read_events(facts.dir);
    m.faults = read_faults(facts.dir);
    m.samples.resize(facts.locks);
    for (Sample& s : read_samples(facts.dir))
        if (s.lock >= 0 && s.lock < facts.locks) m.samples[s.lock].push_back(std::move(s));
    m.heard = read_heard(facts.dir);
    m.swept = read_swept(facts.dir);
    std::map<Key, Attempt> attempts;
    std::map<Key, std::string> values;  // from each acquire's invoke: a group hold's values
    std::map<Key, Hold> holds;
    std::map<int, Nanos> last_event;
    std::map<Key, Nanos> lost;  // may be logged before its hold's ack
    for (const Event& e : m.events) {
        if (e.lock < 0 || e.lock >= facts.locks)
            throw std::runtime_error("history: worker " + std::to_string(e.worker) + " names lock " +
                                     std::to_string(e.lock) + ", not one of the run's " + std::to_string(facts.locks));
        last_event[e.worker] = e.time;
        const Key key{e.worker, e.hold};
        if (e.op == Op::queued) {
            Attempt& a = attempts.at(key);
            if (a.queued == 0) a.queued = e.time;
        } else if (e.op == Op::acquire) {
            if (e.phase == Phase::invoke) {
                // "<owner>" or, for a group lock's hold, "<owner> values=<values>".
                const auto note = e.message.find(values_note);
                const std::string owner = e.message.substr(0, note);
                attempts[key] = Attempt{e.worker, e.hold, e.lock, e.time, 0, Phase::invoke, e.access, 0, owner, {}};
                if (note != std::string::npos) values[key] = e.message.substr(note + values_note.size());
                continue;
            }
            Attempt& a = attempts.at(key);
            a.done = e.time;
            a.outcome = e.phase;
            if (e.phase != Phase::ok) a.message = e.message;
            if (e.phase == Phase::ok) {
                Hold& h = holds[key] = Hold{};
                h.worker = e.worker, h.hold = e.hold, h.lock = e.lock, h.invoke = a.invoke, h.ack = e.time;
                h.access = a.access, h.queued = a.queued, h.token = e.token, h.owner = a.owner;
                h.values = values[key];
            }
        } else if (e.op == Op::lost) {
            if (!lost.count(key)) lost[key] = e.time;
        } else if (e.op == Op::release) {
            Hold& h = holds.at(key);
            if (e.phase == Phase::invoke) h.end = e.time;
            else h.release = e.phase, h.released = e.time, h.release_error = e.phase == Phase::ok ? "" : e.message;
            if (e.phase == Phase::ok) h.left_after_release = std::max<std::int64_t>(e.value, 0);
        } else if (e.phase == Phase::fail) {
            (e.op == Op::read ? m.reads_refused : m.writes_refused)++;
        } else if (e.op == Op::write && e.phase == Phase::ok) {
            m.writes_acked++;
        }
    }
    // A worker that never finished a step died: SIGKILLed (we know when), or
    // crashed (alive at least until its last event).
    std::map<int, Nanos> death(last_event.begin(), last_event.end());
    for (const auto& [worker, t] : facts.killed) death[worker] = t;

    m.holds.resize(facts.locks);
    m.attempts.resize(facts.locks);
    for (auto& [key, a] : attempts) {
        if (a.outcome == Phase::invoke) a.done = std::max(a.invoke, death[a.worker]);
        m.attempts[a.lock].push_back(a);
    }
    for (auto& [key, h] : holds) {
        if (h.end == 0) h.end = std::max(h.ack, death[h.worker]);
        if (lost.count(key)) h.lost = lost[key];
        m.holds[h.lock].push_back(h);
    }
    for (auto& v : m.holds) std::sort(v.begin(), v.end(), [](const Hold& a, const Hold& b) { return a.ack < b.ack; });
    for (auto& v : m.attempts)
        std::sort(v.begin(), v.end(), [](const Attempt& a, const Attempt& b) { return a.invoke < b.invoke; });
    for (const auto& v : m.holds)
        for (const Hold& h : v) m.by_id[h.id()] = &h;
    return m;
}

std::string field_of(const RunFacts& facts, const std::string& owner, Access access) {
    return facts.primitive == Primitive::rwlock && access == Access::exclusive ? owner + ":write" : owner;
}

bool shows_hold(const RunFacts& facts, const std::vector<std::string>& fields, const std::string& owner, Access access,
                const std::string& values) {
    if (facts.primitive != Primitive::group) {
        const std::string field = field_of(facts, owner, access);
        return std::find(fields.begin(), fields.end(), field) != fields.end();
    }
    return std::any_of(fields.begin(), fields.end(), [&](const std::string& hold) {
        if (!hold.starts_with(owner + "=")) return false;
        return values.empty() || values.find(hold.substr(owner.size() + 1)) != std::string::npos;
    });
}

int deposed_port(const Fault& f) {
    if (!fails_over(f.kind)) return 0;
    const auto arrow = f.detail.find(" -> :");
    const auto colon = arrow == std::string::npos ? std::string::npos : f.detail.rfind(':', arrow);
    if (colon == std::string::npos) return 0;
    try {
        return std::stoi(f.detail.substr(colon + 1, arrow - colon - 1));
    } catch (const std::exception&) {
        return 0;
    }
}

// A partition reaches past the heal by reconnect_slack: an acquire invoked
// then waits for the connection the partition broke, and its lease counts
// from the invoke.
const Fault* cut_off(const Model& model, const Hold& hold) {
    for (const Fault& f : model.faults) {
        if (f.start > hold.end) continue;
        const bool partition = f.kind == Nemesis::partition_holder && f.worker == hold.worker &&
                               f.end + reconnect_slack >= hold.invoke;
        const bool narrowed = f.kind == Nemesis::narrow_acl && f.worker == hold.worker && f.end >= hold.invoke;
        const bool unconfirmed = f.kind == Nemesis::pause_replica && f.end >= hold.invoke;
        if (partition || narrowed || unconfirmed) return &f;
    }
    return nullptr;
}

std::optional<std::string> excuse(const RunFacts& facts, const Model& model, const Window& window, Excusable how) {
    if (facts.strict || how == Excusable::by_nothing) return std::nullopt;
    const Nanos half_lease = to_ns(facts.lease) / 2;
    const Nanos slack = how == Excusable::by_queue_loss ? reconnect_slack + to_ns(facts.timeout) : 0;
    for (const Fault& f : model.faults) {
        // A semaphore that lost its count is set afresh while holders from
        // before the restart still hold permits, which they then release on
        // top: it may have more than N permits for the rest of the run.
        const bool lasting = facts.semaphore() && f.kind == Nemesis::restart_volatile;
        // A lock the new master never received is taken again by a waiter
        // once it reconnects and its TTL fallback fires: up to a lease or two
        // after the sentinels (or the cluster) name the new master.
        const Nanos reach = fails_over(f.kind) ? reconnect_slack + 2 * to_ns(facts.lease) : slack;
        if ((f.end + reach < window.from && !lasting) || f.start > window.to) continue;
        const Nanos length = f.end - f.start;
        const std::string what = nemesis_name(f.kind) + " at " + at(facts, f.start) + " (" + f.detail + ")";
        if (how == Excusable::by_queue_loss) {
            // A paused holder's acquire may have returned before the pause: its grant came before its ack.
            // A worker whose rights were revoked left the queue (its tries refused), and its refused
            // release left it holding: taking the lock again re-entered that hold.
            if (loses_queue_places(f.kind) ||
                ((f.kind == Nemesis::pause_holder || f.kind == Nemesis::revoke_rights ||
                  f.kind == Nemesis::narrow_acl) &&
                 f.worker == window.worker))
                return what;
            continue;
        }
        switch (f.kind) {
            case Nemesis::pause_holder:
                if (f.worker == window.worker) return what;
                break;
            case Nemesis::pause_server:
            case Nemesis::debug_sleep:
            case Nemesis::restart_persistent:
                if (length >= half_lease) return what;
                break;
            case Nemesis::restart_volatile:
                return what;
            // Asynchronous replication: a hold (or a renewal) the promoted
            // replica had not received is lost; RELIABILITY.md counts how often.
            case Nemesis::sentinel_failover:
            case Nemesis::sentinel_failover_release:
            case Nemesis::sentinel_kill_master:
            case Nemesis::sentinel_hang:
            case Nemesis::cluster_failover:
            case Nemesis::cluster_kill_primary:
            case Nemesis::cluster_kill_primary_waiting:
                return what;
            default:
                break;
        }
    }
    return std::nullopt;
}

}  // namespace holdfast::check
