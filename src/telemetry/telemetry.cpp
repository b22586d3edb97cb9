#include "telemetry/telemetry.hpp"

#include <algorithm>

#include "common/quoted.hpp"

namespace holdfast {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

const std::array<microseconds, DurationHistogram::size> DurationHistogram::bounds{
    microseconds(100), microseconds(250), microseconds(500), milliseconds(1), milliseconds(2) + microseconds(500),
    milliseconds(5),   milliseconds(10),  milliseconds(25),  milliseconds(50), milliseconds(100),
    milliseconds(250), milliseconds(500), seconds(1),        milliseconds(2500), seconds(5),
    seconds(10),       seconds(30),       seconds(60),       seconds(300)};

std::string_view to_string(Event::Kind kind) {
    switch (kind) {
        case Event::Kind::connection_lost: return "connection_lost";
        case Event::Kind::connection_restored: return "connection_restored";
        case Event::Kind::renewal_failed: return "renewal_failed";
        case Event::Kind::lease_lost: return "lease_lost";
        case Event::Kind::slow_acquire: return "slow_acquire";
        case Event::Kind::script_reloaded: return "script_reloaded";
        case Event::Kind::release_failed: return "release_failed";
        case Event::Kind::completion_threw: return "completion_threw";
        case Event::Kind::connected: return "connected";
    }
    return "unknown";
}

std::string Event::to_string() const {
    std::string line = "holdfast: " + std::string(holdfast::to_string(kind)) + ":";
    if (!primitive.empty()) line += " " + primitive;
    if (!name.empty()) line += " " + detail::quoted(name);
    if (!owner.empty()) line += " owner " + detail::quoted(owner);
    if (!server.empty()) line += " on " + server;
    if (kind == Kind::slow_acquire) line += " waited " + std::to_string(waited.count()) + " ms";
    if (!detail.empty()) line += ": " + detail;
    return line;
}

}  // namespace holdfast

namespace holdfast::detail {
namespace {

// Kinds as the primitives name themselves (Telemetry::label() makes the metric names).
constexpr std::array<std::string_view, 13> known_kinds{
    "lock",        "fair lock",  "spin lock", "fenced lock", "read lock", "write lock", "simple lock",
    "semaphore", "permit-expirable semaphore", "count-down latch", "non-reentrant lock",
    "non-reentrant fair lock", "multi-value lock"};

char label_char(char c) { return c == ' ' || c == '-' ? '_' : c; }

}  // namespace

Telemetry::Telemetry(EventHandler handler, bool counting, std::chrono::milliseconds slow_acquire)
    : handler_(std::move(handler)), counting_(counting), slow_acquire_(slow_acquire) {}

std::string Telemetry::label(std::string_view noun) {
    std::string label(noun);
    std::transform(label.begin(), label.end(), label.begin(), label_char);
    return label;
}

Telemetry::Counters* Telemetry::of(std::string_view noun) const {
    if (!counting_) return nullptr;
    // Compared as labels: events name kinds "fair_lock".
    auto same = [](std::string_view a, std::string_view b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                          [](char x, char y) { return label_char(x) == label_char(y); });
    };
    for (std::size_t i = 0; i < kinds; ++i)
        if (same(known_kinds[i], noun)) {
            Counters& counters = counters_[i];
            if (!counters.used.load(std::memory_order_relaxed)) counters.used.store(true, std::memory_order_relaxed);
            return &counters;
        }
    return nullptr;
}

void Telemetry::Histogram::observe(Clock::duration d) {
    const auto us = std::chrono::duration_cast<microseconds>(d);
    const auto bucket = std::lower_bound(DurationHistogram::bounds.begin(), DurationHistogram::bounds.end(), us) -
                        DurationHistogram::bounds.begin();
    counts[static_cast<std::size_t>(bucket)].fetch_add(1, std::memory_order_relaxed);
    sum_us.fetch_add(static_cast<std::uint64_t>(std::max<long long>(0, us.count())), std::memory_order_relaxed);
}

DurationHistogram Telemetry::Histogram::read() const {
    DurationHistogram h;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        h.counts[i] = counts[i].load(std::memory_order_relaxed);
        h.count += h.counts[i];
    }
    h.sum = microseconds(sum_us.load(std::memory_order_relaxed));
    return h;
}

void Telemetry::tell(const Event& event) const {
    if (Counters* c = of(event.primitive)) {
        if (event.kind == Event::Kind::renewal_failed) c->renewal_failures.fetch_add(1, std::memory_order_relaxed);
        if (event.kind == Event::Kind::lease_lost) c->leases_lost.fetch_add(1, std::memory_order_relaxed);
        if (event.kind == Event::Kind::release_failed) c->release_failures.fetch_add(1, std::memory_order_relaxed);
    }
    if (counting_) {
        if (event.kind == Event::Kind::connection_lost) connections_lost_.fetch_add(1, std::memory_order_relaxed);
        if (event.kind == Event::Kind::connection_restored) reconnects_.fetch_add(1, std::memory_order_relaxed);
        if (event.kind == Event::Kind::script_reloaded) scripts_reloaded_.fetch_add(1, std::memory_order_relaxed);
    }
    if (!handler_) return;
    if (event.kind == Event::Kind::connected) {
        std::lock_guard lock(connected_mutex_);
        if (!connected_.insert(event.server).second) return;
    }
    try {
        handler_(event);
    } catch (...) {
        // The handler's failure must not become the lock's.
    }
}

void Telemetry::acquire_ended(std::string_view noun, const std::string& name, Outcome outcome,
                              Clock::duration waited) const {
    if (Counters* c = of(noun)) {
        switch (outcome) {
            case Outcome::acquired:
                c->acquired.fetch_add(1, std::memory_order_relaxed);
                c->acquire_wait.observe(waited);
                break;
            case Outcome::gave_up: c->gave_up.fetch_add(1, std::memory_order_relaxed); break;
            case Outcome::failed: c->failed.fetch_add(1, std::memory_order_relaxed); break;
        }
    }
    if (outcome == Outcome::acquired && waited > slow_acquire_ && handler_) {
        Event event;
        event.kind = Event::Kind::slow_acquire;
        event.primitive = label(noun);
        event.name = name;
        event.waited = std::chrono::duration_cast<milliseconds>(waited);
        event.detail = "longer than Config::slow_acquire_threshold (" + std::to_string(slow_acquire_.count()) + " ms)";
        tell(event);
    }
}

void Telemetry::waiting(std::string_view noun, int delta) const {
    if (Counters* c = of(noun)) c->waiting.fetch_add(delta, std::memory_order_relaxed);
}

void Telemetry::held(std::string_view noun, Clock::duration held_for) const {
    if (Counters* c = of(noun)) c->hold_time.observe(held_for);
}

void Telemetry::renewed(std::string_view noun) const {
    if (Counters* c = of(noun)) c->renewals.fetch_add(1, std::memory_order_relaxed);
}

Metrics Telemetry::snapshot() const {
    Metrics m;
    for (std::size_t i = 0; i < kinds; ++i) {
        const Counters& c = counters_[i];
        if (!c.used.load(std::memory_order_relaxed)) continue;
        PrimitiveMetrics& p = m.primitives[label(known_kinds[i])];
        p.acquired = c.acquired.load(std::memory_order_relaxed);
        p.gave_up = c.gave_up.load(std::memory_order_relaxed);
        p.failed = c.failed.load(std::memory_order_relaxed);
        p.acquire_wait = c.acquire_wait.read();
        p.waiting = c.waiting.load(std::memory_order_relaxed);
        p.hold_time = c.hold_time.read();
        p.renewals = c.renewals.load(std::memory_order_relaxed);
        p.renewal_failures = c.renewal_failures.load(std::memory_order_relaxed);
        p.leases_lost = c.leases_lost.load(std::memory_order_relaxed);
        p.release_failures = c.release_failures.load(std::memory_order_relaxed);
    }
    m.connections_lost = connections_lost_.load(std::memory_order_relaxed);
    m.reconnects = reconnects_.load(std::memory_order_relaxed);
    m.scripts_reloaded = scripts_reloaded_.load(std::memory_order_relaxed);
    return m;
}

}  // namespace holdfast::detail
