#include "model.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace holdfast::check {
namespace {

using Key = std::pair<int, long>;  // worker, hold

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
    std::map<Key, Attempt> attempts;
    std::map<Key, Hold> holds;
    std::map<int, Nanos> last_event;
    for (const Event& e : m.events) {
        if (e.lock < 0 || e.lock >= facts.locks)
            throw std::runtime_error("history: worker " + std::to_string(e.worker) + " names lock " +
                                     std::to_string(e.lock) + ", not one of the run's " + std::to_string(facts.locks));
        last_event[e.worker] = e.time;
        const Key key{e.worker, e.hold};
        if (e.op == Op::acquire) {
            if (e.phase == Phase::invoke) {
                attempts[key] = Attempt{e.worker, e.hold, e.lock, e.time, 0, Phase::invoke};
                continue;
            }
            Attempt& a = attempts.at(key);
            a.done = e.time;
            a.outcome = e.phase;
            if (e.phase == Phase::ok) holds[key] = Hold{e.worker, e.hold, e.lock, a.invoke, e.time, 0, e.token};
        } else if (e.op == Op::release) {
            Hold& h = holds.at(key);
            if (e.phase == Phase::invoke) h.end = e.time;
            else h.release = e.phase, h.released = e.time;
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
        m.holds[h.lock].push_back(h);
    }
    for (auto& v : m.holds) std::sort(v.begin(), v.end(), [](const Hold& a, const Hold& b) { return a.ack < b.ack; });
    for (auto& v : m.attempts)
        std::sort(v.begin(), v.end(), [](const Attempt& a, const Attempt& b) { return a.invoke < b.invoke; });
    for (const auto& v : m.holds)
        for (const Hold& h : v) m.by_id[h.id()] = &h;
    return m;
}

std::optional<std::string> excuse(const RunFacts& facts, const Model& model, const Hold& hold, Excusable how) {
    if (facts.strict) return std::nullopt;
    const Nanos half_lease = to_ns(facts.lease) / 2;
    for (const Fault& f : model.faults) {
        if (f.end < hold.invoke || f.start > hold.end) continue;
        const Nanos length = f.end - f.start;
        const std::string what = nemesis_name(f.kind) + " at " + at(facts, f.start) + " (" + f.detail + ")";
        if (how == Excusable::by_token_reset) {
            if (f.kind == Nemesis::restart_volatile) return what;
            continue;
        }
        switch (f.kind) {
            case Nemesis::pause_holder:
                if (f.worker == hold.worker) return what;
                break;
            case Nemesis::pause_server:
            case Nemesis::debug_sleep:
            case Nemesis::restart_persistent:
                if (length >= half_lease) return what;
                break;
            case Nemesis::restart_volatile:
                return what;
            default:
                break;
        }
    }
    return std::nullopt;
}

}  // namespace holdfast::check
