#include "targets.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capacity.hpp"
#include "contended.hpp"

namespace holdfast::bench {
namespace {

// How a measured figure is held to its target.
enum class Compare { at_least, at_most, equals };

// How a figure and its target print.
enum class Unit { count, integer, tenths, micros, bytes, ratio, minutes };

std::string in_unit(double value, Unit unit) {
    switch (unit) {
        case Unit::count: return count(value);
        case Unit::integer: return std::to_string(static_cast<long long>(value));
        case Unit::tenths: return fixed(value, 1);
        case Unit::micros: return micros(value);
        case Unit::bytes: return bytes(value);
        case Unit::ratio: return ratio_of(value);
        case Unit::minutes: return fixed(value, 1) + " min";
    }
    return fixed(value, 2);
}

// A target as data: how the figure compares with the target value, which is
// in the figure's unit, or a factor of a reference figure of the same run
// (a ceiling, the plain server) where the row names one.
struct Goal {
    Compare compare;
    double value;
};

// Every target a run is held to.
namespace goal {
// Uncontended pairs against the server's ceiling.
constexpr Goal threads_of_pipelined{Compare::at_least, 1.0};    // × pipelined acquire ÷ 2
constexpr Goal pair_p50_of_serial{Compare::at_most, 1.5};       // × 2 × `-c 1` acquire p50
constexpr Goal metrics_cost{Compare::at_least, 0.97};           // counting ÷ without
constexpr Goal tls_of_ceiling{Compare::at_least, 0.7};          // × the TLS ceiling's pairs/s
constexpr Goal tls_of_plain{Compare::at_least, 0.7};            // × the plain server's pairs/s
constexpr Goal cluster_of_ceiling{Compare::at_least, 0.8};      // × the per-master ceiling's pairs/s
constexpr Goal cluster_of_single{Compare::at_least, 0.8};       // × the single server's pairs/s
// Client memory and capacity.
constexpr Goal heap_per_held_lock{Compare::at_most, 256};       // B
constexpr Goal waiters{Compare::at_least, 1'000'000};
constexpr Goal heap_per_waiter{Compare::at_most, 256};          // B
constexpr Goal drained{Compare::at_least, 50'000};              // owner changes/s
// Contention.
constexpr Goal commands_per_change{Compare::at_most, 6};
constexpr Goal commands_growth{Compare::at_most, 1.1};          // most processes ÷ fewest
constexpr Goal handoff_of_round_trip{Compare::at_most, 2};      // × release + acquire round trip
constexpr Goal handoff_p50_us{Compare::at_most, 500};
// What must not happen at all.
constexpr Goal none{Compare::equals, 0};
// The test suite.
constexpr Goal fresh_test_minutes{Compare::at_most, 15};
}  // namespace goal

// One row of a targets table.
struct Target {
    Target(std::string figure, Goal goal, Unit unit, std::optional<double> measured, std::string note = "",
           std::optional<double> reference = std::nullopt, std::string against = "", bool holds = true)
        : figure(std::move(figure)), goal(goal), unit(unit), measured(measured), note(std::move(note)),
          reference(reference), against(std::move(against)), holds(holds) {}

    std::string figure;
    Goal goal;
    Unit unit;
    std::optional<double> measured;   // nullopt: not measured, `note` says why
    std::string note;                 // beside the measured value
    std::optional<double> reference;  // the goal's value is a factor of this
    std::string against;              // the reference or a peer of this run, described; "" for none
    bool holds;                       // a further condition of the verdict, which `note` states (not
                                      // measured and not holding: NOT MET)
};

// The goal's value, times the reference where there is one.
double target_value(const Target& t) { return t.reference ? t.goal.value * *t.reference : t.goal.value; }

std::string target_text(const Target& t) {
    const std::string sign = t.goal.compare == Compare::at_least  ? "≥ "
                             : t.goal.compare == Compare::at_most ? "≤ "
                                                                  : "= ";
    const std::string value = in_unit(target_value(t), t.unit);
    if (!t.reference) return sign + value;
    return sign + fixed(t.goal.value, 2) + " × " + in_unit(*t.reference, t.unit) + " = " + value;
}

std::string verdict(const Target& t) {
    if (!t.measured) return t.holds ? "not measured" : "**NOT MET**";
    const double m = *t.measured, limit = target_value(t);
    const bool met = t.goal.compare == Compare::at_least ? m >= limit
                     : t.goal.compare == Compare::at_most ? m <= limit
                                                           : m == limit;
    return met && t.holds ? "MET" : "**NOT MET**";
}

void target_rows(std::ostringstream& out, const std::vector<Target>& all) {
    out << "| figure | measured | target | read against (this run) | verdict |\n|---|--:|--:|--:|---|\n";
    for (const auto& t : all) {
        std::string measured = t.measured ? in_unit(*t.measured, t.unit) : std::string();
        if (!t.note.empty()) measured += measured.empty() ? t.note : " (" + t.note + ")";
        out << "| " << t.figure << " | " << measured << " | " << target_text(t) << " | "
            << (t.against.empty() ? "—" : t.against) << " | " << verdict(t) << " |\n";
    }
    out << '\n';
}

std::optional<double> measured(double value) { return value; }
std::optional<double> measured(long long value) { return static_cast<double>(value); }
std::optional<double> measured(std::size_t value) { return static_cast<double>(value); }

const Contended* contended_run(const Results& r, Primitive primitive, int processes) {
    for (const auto* runs : {&r.contended, &r.scaling})
        for (const auto& c : *runs)
            if (c.primitive == primitive && c.processes == processes) return &c;
    return nullptr;
}

// A topology's pairs/s, 1 thread and many, against holdfast's on the plain single server.
void against_plain(std::vector<Target>& all, const Results& r, const std::string& where, Goal goal,
                   double single_pairs, double many_pairs) {
    const std::string threads = std::to_string(r.many_threads);
    all.push_back({where + ", 1 thread: pairs/s", goal, Unit::count, measured(single_pairs), "", r.single.pairs_per_s,
                   "plain single-server 1-thread pairs/s"});
    all.push_back({where + ", " + threads + " threads: pairs/s", goal, Unit::count, measured(many_pairs), "",
                   r.many.pairs_per_s, "plain single-server " + threads + "-thread pairs/s"});
}

// Uncontended lock()+unlock() pairs against redis-benchmark on the same server,
// over TLS and on the cluster too.
std::vector<Target> throughput_targets(const Results& r, const Ceilings& k) {
    std::vector<Target> all;
    const std::string threads = std::to_string(r.many_threads);
    if (r.plain) {
        all.push_back({threads + " threads, own lock each, one Client: pairs/s", goal::threads_of_pipelined,
                       Unit::count, measured(r.many.pairs_per_s), "", k.pairs_pipelined,
                       "`-c 50 -P 16` acquire " + count(r.ceiling.acquire_pipelined.ops_per_s) + " ops/s ÷ 2"});
        all.push_back({"1 thread: pair p50", goal::pair_p50_of_serial, Unit::micros, measured(r.single.p50_us), "",
                       k.pair_p50_us, "2 × `-c 1` acquire p50"});
        all.push_back({"metrics cost: " + threads + "-thread pairs/s counting ÷ without, median round",
                       goal::metrics_cost, Unit::ratio, measured(median(r.metrics_round_ratios))});
    }
    if (r.tls) {
        const Ceilings t = ceilings_of(r.tls->ceiling);
        all.push_back({"TLS, 1 thread: pairs/s", goal::tls_of_ceiling, Unit::count,
                       measured(r.tls->single.pairs_per_s), "", t.pairs_serial, "TLS `-c 1` acquire ÷ 2"});
        all.push_back({"TLS, " + threads + " threads: pairs/s", goal::tls_of_ceiling, Unit::count,
                       measured(r.tls->many_pairs_per_s), "", t.pairs_pipelined, "TLS pipelined acquire ÷ 2"});
        all.push_back({"TLS, 1 thread: pair p50", goal::pair_p50_of_serial, Unit::micros,
                       measured(r.tls->single.p50_us), "", t.pair_p50_us, "2 × TLS `-c 1` acquire p50"});
        if (r.plain)
            against_plain(all, r, "TLS", goal::tls_of_plain, r.tls->single.pairs_per_s, r.tls->many_pairs_per_s);
    }
    if (r.cluster) {
        const ClusterCeilings c = cluster_ceilings(*r.cluster);
        all.push_back({"cluster, 1 thread: pairs/s", goal::cluster_of_ceiling, Unit::count,
                       measured(r.cluster->single.pairs_per_s), "", c.pairs_serial,
                       "per-master ceiling: mean `-c 1` acquire ÷ 2"});
        all.push_back({"cluster, 1 thread: pair p50", goal::pair_p50_of_serial, Unit::micros,
                       measured(r.cluster->single.p50_us), "", c.pair_p50_us, "2 × mean `-c 1` acquire p50"});
        all.push_back({"cluster, " + threads + " threads: pairs/s", goal::cluster_of_ceiling, Unit::count,
                       measured(r.cluster->many_pairs_per_s), "", c.pairs_pipelined,
                       "per-master ceiling: mean pipelined acquire ÷ 2"});
        if (r.plain)
            against_plain(all, r, "cluster", goal::cluster_of_single, r.cluster->single.pairs_per_s,
                          r.cluster->many_pairs_per_s);
    }
    return all;
}

// What the client holds per held lock and per waiter, and whether a million
// waiters drain one owner change each.
std::vector<Target> capacity_targets(const Results& r) {
    std::vector<Target> all;
    const auto heap_figure = [](double value) {
        return heap_measurable() ? measured(value) : std::nullopt;
    };
    const std::string unmeasured = heap_measurable() ? "" : heap_unmeasurable;
    if (r.held) {
        const HeldLocks& h = *r.held;
        const std::string held = count(static_cast<double>(h.locks));
        all.push_back({"held locks (" + held + " under the watchdog, one Client): library heap per lock",
                       goal::heap_per_held_lock, Unit::bytes, heap_figure(h.library_bytes_per_lock), unmeasured});
        all.push_back({"held locks: acquires not granted and releases that failed", goal::none, Unit::integer,
                       measured(h.failed)});
        all.push_back({"held locks: keys in the run's database while held",
                       {Compare::equals, static_cast<double>(h.locks)}, Unit::count, measured(h.keys_while_held), "",
                       std::nullopt, "one per lock held"});
        all.push_back({"held locks: keys left after every release", goal::none, Unit::integer, measured(h.keys_after)});
    }
    if (r.waiters) {
        const Waiters& w = *r.waiters;
        const std::string at = " (at " + count(static_cast<double>(w.waiters)) + " waiters)";
        const bool queued = w.failure.empty();
        const auto if_queued = [queued](double value) { return queued ? measured(value) : std::nullopt; };
        const std::string not_queued = queued ? "" : "not measured: not all waiting";
        all.push_back({"waiters in the run (on " + count(static_cast<double>(w.locks)) + " locks)", goal::waiters,
                       Unit::count, measured(w.waiters)});
        // Not all waiting fails the target, whether or not the heap was measurable.
        all.push_back({"waiters: library heap per waiter" + at, goal::heap_per_waiter, Unit::bytes,
                       heap_measurable() ? if_queued(w.library_bytes_per_waiter) : std::nullopt,
                       heap_measurable() ? not_queued : unmeasured, std::nullopt, "", queued || !heap_measurable()});
        // No redis-benchmark figure bounds a drain; the server's own CPU per owner change does.
        all.push_back({"waiters: drain, owner changes/s" + at, goal::drained, Unit::count, measured(w.handoffs_per_s),
                       "", std::nullopt,
                       w.server_us_per_change > 0 ? count(1e6 / w.server_us_per_change) + " (server CPU bound)" : ""});
        all.push_back({"waiters granted exactly once", {Compare::equals, static_cast<double>(w.waiters)}, Unit::count,
                       measured(w.granted), "", std::nullopt, "every waiter"});
        all.push_back({"waiters granted twice or more", goal::none, Unit::integer, measured(w.granted_twice)});
        all.push_back({"waiters never granted", goal::none, Unit::integer, measured(w.never_granted)});
        all.push_back({"keys left after the drain", goal::none, Unit::integer, measured(w.keys_after)});
    }
    return all;
}

// Commands and wait per owner change under contention, by the number of processes.
std::vector<Target> contention_targets(const Results& r, const Ceilings& k) {
    std::vector<Target> all;
    const Contended* first = nullptr;
    const Contended* last = nullptr;
    bool all_within = true;  // ≤ 6 at every count: "not growing" from a figure above it would say little
    for (const int processes : {8, 32, 128}) {
        const Contended* lock = contended_run(r, Primitive::lock, processes);
        if (!lock) continue;
        const Contended* fair = contended_run(r, Primitive::fair_lock, processes);
        if (!first) first = lock;
        last = lock;
        const bool changed = lock->handoffs > 0;
        all.push_back({"contended Lock, " + std::to_string(processes) +
                           " processes: commands per owner change after the warm-up",
                       goal::commands_per_change, Unit::tenths, measured(lock->commands_per_handoff),
                       "whole run " + fixed(lock->commands_per_handoff_whole, 1) + (changed ? "" : "; no owner change"),
                       std::nullopt, fair ? "FairLock " + fixed(fair->commands_per_handoff, 1) : "", changed});
        all_within = all_within && changed && lock->commands_per_handoff <= goal::commands_per_change.value;
    }
    if (first && last && first != last) {
        const double growth =
            first->commands_per_handoff > 0 ? last->commands_per_handoff / first->commands_per_handoff : 0;
        all.push_back({"contended Lock: commands per owner change at " + std::to_string(last->processes) +
                           " processes ÷ at " + std::to_string(first->processes),
                       goal::commands_growth, Unit::ratio, measured(growth),
                       all_within ? "" : "met only if ≤ 6 at every count, which it is not", std::nullopt, "",
                       all_within});
    }
    if (const Contended* lock = contended_run(r, Primitive::lock, 8); lock && r.plain)
        all.push_back({"contended Lock, 8 processes: handoff wait p50", goal::handoff_of_round_trip, Unit::micros,
                       measured(lock->wait_p50_us), "", k.handoff_us,
                       "one round trip, release + acquire: 2 × `-c 1` acquire p50"});
    if (const Contended* lock = contended_run(r, Primitive::lock, 8))
        all.push_back({"contended Lock, 8 processes: handoff wait p50", goal::handoff_p50_us, Unit::micros,
                       measured(lock->wait_p50_us)});
    for (const auto& [where, c] : {std::pair{"TLS", r.tls ? r.tls->contended : std::nullopt},
                                   std::pair{"cluster", r.cluster ? r.cluster->contended : std::nullopt}})
        if (c)
            all.push_back({std::string(where) + " contended Lock: handoff wait p50", goal::handoff_p50_us,
                           Unit::micros, measured(c->wait_p50_us)});
    return all;
}

// Lost updates: the critical sections a broken lock would let overlap.
std::vector<Target> exclusion_targets(const Results& r) {
    std::vector<Target> all;
    for (const auto* runs : {&r.contended, &r.scaling})
        for (const auto& c : *runs)
            all.push_back({"contended " + describe(c.primitive) + ", " + std::to_string(c.processes) +
                               " processes: lost updates",
                           goal::none, Unit::integer, measured(c.lost_updates)});
    for (const auto& [where, c] : {std::pair{"TLS", r.tls ? r.tls->contended : std::nullopt},
                                   std::pair{"cluster", r.cluster ? r.cluster->contended : std::nullopt}})
        if (c)
            all.push_back({std::string(where) + " contended Lock: lost updates", goal::none, Unit::integer,
                           measured(c->lost_updates)});
    return all;
}

std::vector<Target> test_suite_targets(const Results& r) {
    const std::string fresh = "fresh clone, `./run test` (build included), on a quiet machine";
    if (r.fresh_test)
        return {{fresh, goal::fresh_test_minutes, Unit::minutes, measured(r.fresh_test->minutes),
                 "given in " + r.fresh_test->source + ", not measured by this run"}};
    return {{fresh, goal::fresh_test_minutes, Unit::minutes, std::nullopt,
             std::string("not measured here: see the CI log (") + fresh_test_variable + " puts its time here)"}};
}

// Why the blocking threads' figure is where it is, from this run's CPU per pair.
void many_threads_bound(std::ostringstream& out, const Results& r, const Ceilings& k, unsigned cores) {
    const double budget_us = k.pairs_pipelined > 0 ? cores * 1e6 / k.pairs_pipelined : 0;
    const ManyPairs& t = r.many;
    const ManyPairs& a = r.many_async;
    const std::string threads = std::to_string(r.many_threads);
    out << threads << " threads against the pipelined ceiling: a blocking pair cost " << cpu_per_pair(t)
        << " of CPU (this process, the server) in this run, so the machine's " << cores << " cores allow at most "
        << count(cores_allow(t, cores)) << " pairs/s at that cost (" << ratio(cores_allow(t, cores), k.pairs_pipelined)
        << " of the ceiling, which leaves " << micros(budget_us) << " a pair in all). The same Client's " << threads
        << " async chains, whose callers are not put to sleep and woken, ran " << count(a.pairs_per_s) << " pairs/s ("
        << ratio(a.pairs_per_s, k.pairs_pipelined) << ") at " << cpu_per_pair(a)
        << " a pair. The analyses below profile the difference.\n\n";
}

}  // namespace

void targets_section(std::ostringstream& out, const Results& r, const Ceilings& k, unsigned cores) {
    out << "## Targets\n\nEach figure of this run against its target: a value, or a factor of the figure it is read "
           "against in the same run.\n\n### Uncontended pairs against the server's ceiling\n\n";
    target_rows(out, throughput_targets(r, k));
    if (r.plain) many_threads_bound(out, r, k, cores);
    out << "### Client memory and capacity: held locks and waiters\n\n";
    target_rows(out, capacity_targets(r));
    out << "Memory is the heap in use (glibc `mallinfo2`: every arena and mmapped block, chunk headers included) "
           "before and after, the caller's own objects (`Lock` handles, owner strings) made before the first "
           "reading. A figure measured at fewer waiters than the target's 1,000,000 does not show the target met "
           "at 1,000,000.\n\n### Contention: commands and wait per owner change\n\n";
    target_rows(out, contention_targets(r, k));
    out << "### Mutual exclusion: lost updates\n\n";
    target_rows(out, exclusion_targets(r));
    out << "### The test suite\n\n";
    target_rows(out, test_suite_targets(r));
}

}  // namespace holdfast::bench
