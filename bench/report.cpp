#include "report.hpp"

#include "holdfast/lock.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

namespace holdfast::bench {
namespace {

std::string first_line_of(const char* path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("model name", 0) != 0) continue;
        const auto colon = line.find(':');
        return colon == std::string::npos ? line : line.substr(colon + 2);
    }
    return "unknown";
}

// 1234567.8 -> "1,234,568"
std::string count(double value) {
    const std::string digits = std::to_string(static_cast<long long>(value + 0.5));
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string fixed(double value, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

std::string micros(double us) { return fixed(us, 1) + " µs"; }
std::string ratio_of(double value) { return fixed(value, 2) + "×"; }
std::string ratio(double value, double ceiling) { return ceiling > 0 ? ratio_of(value / ceiling) : "—"; }

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t mid = values.size() / 2;
    return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

struct Row {
    std::string figure, holdfast, ceiling, ratio;
};

void table(std::ostringstream& out, const std::string& first_column, const std::vector<Row>& rows) {
    out << "| " << first_column << " | holdfast | ceiling | holdfast / ceiling |\n|---|--:|--:|--:|\n";
    for (const auto& r : rows) out << "| " << r.figure << " | " << r.holdfast << " | " << r.ceiling << " | " << r.ratio << " |\n";
    out << '\n';
}

// The ceilings each holdfast figure is compared with, from the -c 1 and
// pipelined acquire runs: a pair is two script calls, a critical section four
// round trips (acquire, GET, SET, release), a handoff two (release, acquire).
struct Ceilings {
    double pairs_serial, pairs_pipelined, pair_p50_us, sections_per_s, handoff_us;
};

Ceilings ceilings_of(const Ceiling& c) {
    return {c.acquire_serial.ops_per_s / 2, c.acquire_pipelined.ops_per_s / 2, 2 * c.acquire_serial.p50_ms * 1e3,
            c.acquire_serial.ops_per_s / 4, 2 * c.acquire_serial.p50_ms * 1e3};
}

void ceiling_runs(std::ostringstream& out, const std::string& title, const Ceiling& c) {
    auto run = [](const BenchRun& r) {
        return count(r.ops_per_s) + " ops/s, p50 " + fixed(r.p50_ms, 3) + " ms, p99 " + fixed(r.p99_ms, 3) + " ms";
    };
    out << "| " << title << " | result |\n|---|--:|\n"
        << "| acquire EVALSHA, `-c 50 -P 16` | " << run(c.acquire_pipelined) << " |\n"
        << "| release EVALSHA, `-c 50 -P 16` | " << run(c.release_pipelined) << " |\n"
        << "| acquire EVALSHA, `-c 1` | " << run(c.acquire_serial) << " |\n"
        << "| release EVALSHA, `-c 1` | " << run(c.release_serial) << " |\n\n";
}

void ceiling_table(std::ostringstream& out, const Ceiling& c) {
    out << "## Ceiling: redis-benchmark on holdfast's own scripts\n\n";
    ceiling_runs(out, "run", c);
}

void contended_table(std::ostringstream& out, const Contended& c, const Ceilings& k) {
    const double share = c.sections ? 100.0 * static_cast<double>(c.handoffs) / static_cast<double>(c.sections) : 0;
    out << "## holdfast, contended: " << describe(c.primitive) << " (" << c.processes
        << " processes, own Client each, " << fixed(c.seconds, 1) << " s)\n\n";
    table(out, "figure",
          {{"critical sections/s (GET + SET inside)", count(c.sections_per_s),
            count(k.sections_per_s) + " (`-c 1` acquire ÷ 4)", ratio(c.sections_per_s, k.sections_per_s)},
           {"owner changes/s", count(c.handoffs_per_s) + " (" + fixed(share, 1) + "% of sections)", "—", "—"},
           {"handoff wait p50 (release → other's acquire returns)", micros(c.wait_p50_us),
            micros(k.handoff_us) + " (2 × `-c 1` acquire p50)", ratio(c.wait_p50_us, k.handoff_us)},
           {"handoff wait p99", micros(c.wait_p99_us), "—", "—"},
           {"longest single acquire call", fixed(c.longest_lock_ms, 1) + " ms", "—", "—"},
           {"commands per owner change (after the first quarter's warm-up)", fixed(c.commands_per_handoff, 1),
            "2 (release + acquire)", ratio(c.commands_per_handoff, 2)},
           {"commands per owner change, whole run (each process's first wait included)",
            fixed(c.commands_per_handoff_whole, 1), "—", "—"},
           {"lost updates", std::to_string(c.lost_updates) + " (counter " + std::to_string(c.counter) + ", sections " +
                                std::to_string(c.sections) + ")",
            "0", "—"}});
    const double per_section = c.sections ? static_cast<double>(c.lock_commands) / static_cast<double>(c.sections) : 0;
    out << "Commands counted (top-level, from INFO commandstats deltas):";
    for (const auto& [name, calls] : c.command_calls) out << " " << name << " " << calls << ";";
    out << " over " << c.sections << " critical sections (" << fixed(per_section, 1) << " per section) and "
        << c.handoffs << " owner changes.\n\n";
}

std::string bytes(double value) { return count(value) + " B"; }

constexpr const char* heap_unmeasurable = "not measurable in this build (a sanitizer's allocator)";

// Heap per lock or waiter, where the allocator reports it.
std::string heap(double value) { return heap_measurable() ? bytes(value) : heap_unmeasurable; }

// What the Client told through Config::on_event during a run, if anything.
void told(std::ostringstream& out, const std::map<std::string, long long>& events) {
    if (events.empty()) return;
    out << "Events the Client told (`Config::on_event`):";
    for (const auto& [kind, n] : events) out << " " << kind << " " << n << ";";
    out << "\n\n";
}

void held_table(std::ostringstream& out, const HeldLocks& h) {
    out << "## holdfast, held locks: " << count(static_cast<double>(h.locks))
        << " locks held at once by one Client (one owner, `async_lock` without a lease: the watchdog renews them)\n\n"
        << "| figure | holdfast |\n|---|--:|\n"
        << "| time to take them all (" << count(static_cast<double>(held_locks_in_flight))
        << " `async_lock` in flight) | " << fixed(h.acquire_seconds, 2)
        << " s |\n"
        << "| heap the library holds per held lock | " << heap(h.library_bytes_per_lock) << " |\n"
        << "| heap of the caller's `Lock` handle per lock (" << sizeof(Lock) << " B object, name on the heap), "
        << "not counted above | " << heap(h.handle_bytes_per_lock) << " |\n"
        << "| heap still held per lock after every release | " << heap(h.left_bytes_per_lock) << " |\n"
        << "| keys in the run's database: while held; after the releases | " << h.keys_while_held << "; "
        << h.keys_after << " |\n"
        << "| acquires not granted and releases that failed | " << h.failed << " |\n\n";
    told(out, h.events);
}

void waiters_table(std::ostringstream& out, const Waiters& w) {
    out << "## holdfast, waiters: " << count(static_cast<double>(w.waiters)) << " waiters on "
        << count(static_cast<double>(w.locks))
        << " Locks, one Client (`--waiters N` for another count)\n\n"
           "One owner holds every lock; each waiter is an owner of its own calling `async_lock` (no lease). Once the "
           "Client counts them all waiting and the server lists them all (a waiter lists itself with its second "
           "attempt, which may still be in flight when it is counted; timed from before, the drain would include "
           "those attempts), the heap is read, then the holders release and each waiter releases as soon as it is "
           "granted, handing the lock on: one owner change per waiter. "
        << "Waiters are asked for with at most " << count(static_cast<double>(waiters_not_yet_waiting))
        << " not yet waiting at a time.\n\n";
    if (!w.failure.empty())
        out << "**Not measured: the waiters could not all be made to wait.** " << w.failure
            << ". The drain was not run; the Client's end failed the waiters still waiting.\n\n";
    out << "| figure | holdfast |\n|---|--:|\n"
        << "| time until every waiter is waiting | " << fixed(w.queue_seconds, 2) << " s |\n"
        << "| then until the server lists every waiter | " << fixed(w.listing_seconds, 2) << " s ("
        << count(static_cast<double>(w.listed)) << " listed) |\n"
        << "| heap the library holds per waiter | " << heap(w.library_bytes_per_waiter) << " |\n"
        << "| drain: holders' releases to the last grant | " << fixed(w.drain_seconds, 2) << " s |\n"
        << "| drain: owner changes/s | " << count(w.handoffs_per_s) << " |\n"
        << "| drain: the server's CPU per owner change (so at most this many a second) | "
        << fixed(w.server_us_per_change, 1) << " µs ("
        << count(w.server_us_per_change > 0 ? 1e6 / w.server_us_per_change : 0) << "/s) |\n"
        << "| drain: the client process's CPU per owner change (all threads) | " << fixed(w.client_us_per_change, 1)
        << " µs |\n"
        << "| waiters granted exactly once; twice or more; never | " << w.granted << "; " << w.granted_twice << "; "
        << w.never_granted << " |\n"
        << "| keys in the run's database after the drain | " << w.keys_after << " |\n\n";
    if (!w.first_error.empty()) out << "The first waiter that failed was told: " << w.first_error << "\n\n";
    told(out, w.events);
}

// The same contended run's figures at 8, 32 and 128 processes, Lock beside FairLock.
void scaling_table(std::ostringstream& out, const Results& r) {
    std::vector<const Contended*> runs;
    for (const auto& c : r.contended)
        if (c.primitive != Primitive::semaphore) runs.push_back(&c);
    for (const auto& c : r.scaling) runs.push_back(&c);
    out << "## holdfast, contended: Lock and FairLock by the number of processes\n\n"
        << "| processes | primitive | run | commands per owner change (after warm-up) | whole run | owner changes/s | "
           "handoff wait p50 | lost updates |\n|--:|---|--:|--:|--:|--:|--:|--:|\n";
    for (const Contended* c : runs) {
        out << "| " << c->processes;
        if (c->ready_at_start < c->processes)
            out << " (" << c->ready_at_start << " ready at the start)";
        out << " | " << describe(c->primitive) << " | " << fixed(c->seconds, 1) << " s | "
            << fixed(c->commands_per_handoff, 1) << " | " << fixed(c->commands_per_handoff_whole, 1) << " | "
            << count(c->handoffs_per_s) << " | "
            << micros(c->wait_p50_us) << " | " << c->lost_updates << " |\n";
    }
    out << '\n';
}

// What the cores allow at a pair's CPU cost (this process's and the server's): cores ÷ CPU per pair.
double cores_allow(const ManyPairs& m, unsigned cores) {
    const double us = m.client_us_per_pair + m.server_us_per_pair;
    return us > 0 ? cores * 1e6 / us : 0;
}

std::string cpu_per_pair(const ManyPairs& m) {
    return micros(m.client_us_per_pair) + " + " + micros(m.server_us_per_pair);
}

void holdfast_tables(std::ostringstream& out, const Results& r, const Ceilings& k, unsigned cores) {
    const auto& s = r.single;
    const std::string threads = std::to_string(r.many_threads);
    // What a pair may cost in all, this process's CPU and the server's, for the cores to run the ceiling's pairs/s.
    const double budget_us = k.pairs_pipelined > 0 ? cores * 1e6 / k.pairs_pipelined : 0;
    out << "## holdfast, uncontended (`lock()` + `unlock()`, watchdog lease)\n\n";
    table(out, "figure",
          {{"1 thread, one lock: pairs/s", count(s.pairs_per_s), count(k.pairs_serial) + " (`-c 1` acquire ÷ 2)",
            ratio(s.pairs_per_s, k.pairs_serial)},
           {"1 thread: pair p50", micros(s.p50_us), micros(k.pair_p50_us) + " (2 × `-c 1` acquire p50)",
            ratio(s.p50_us, k.pair_p50_us)},
           {"1 thread: pair p99", micros(s.p99_us), "—", "—"},
           {threads + " threads, own lock each, one Client: pairs/s", count(r.many.pairs_per_s),
            count(k.pairs_pipelined) + " (pipelined acquire ÷ 2)", ratio(r.many.pairs_per_s, k.pairs_pipelined)},
           {threads + " threads: CPU per pair, this process (every thread) + the server", cpu_per_pair(r.many),
            micros(budget_us) + " in all (" + std::to_string(cores) + " cores ÷ the ceiling's pairs/s)",
            ratio(r.many.client_us_per_pair + r.many.server_us_per_pair, budget_us)},
           {threads + " threads: pairs/s the cores allow at that CPU per pair", count(cores_allow(r.many, cores)),
            count(k.pairs_pipelined), ratio(cores_allow(r.many, cores), k.pairs_pipelined)},
           {threads + " async chains (`async_lock` → `async_release` → the next pair, on the loop thread), one Client: "
                      "pairs/s",
            count(r.many_async.pairs_per_s), count(k.pairs_pipelined),
            ratio(r.many_async.pairs_per_s, k.pairs_pipelined)},
           {threads + " async chains: CPU per pair, this process + the server", cpu_per_pair(r.many_async),
            micros(budget_us) + " in all", ratio(r.many_async.client_us_per_pair + r.many_async.server_us_per_pair,
                                                 budget_us)}});
    out << "Metrics (docs/operations.md): " << r.many_threads << " threads, " << r.metrics_round_ratios.size()
        << " rounds alternating `Config::metrics` off and on (ABBA): " << count(r.metrics_on_pairs_per_s)
        << " pairs/s counting, " << count(r.metrics_off_pairs_per_s) << " without (means); per round, counting ÷ "
        << "without: median " << ratio_of(median(r.metrics_round_ratios)) << ", rounds";
    for (const double x : r.metrics_round_ratios) out << " " << ratio_of(x);
    out << ".\n\n";
    if (r.held) held_table(out, *r.held);
    if (r.waiters) waiters_table(out, *r.waiters);
    for (const auto& c : r.contended) contended_table(out, c, k);
    if (!r.scaling.empty()) scaling_table(out, r);
}

// A contended Lock run beside the plain server's (the first contended run), if both ran.
void contended_beside(std::ostringstream& out, const std::string& where, const Contended& c, const Results& r) {
    const Contended* plain = r.contended.empty() ? nullptr : &r.contended.front();
    auto beside = [&](const std::string& value) { return plain ? value : std::string("—"); };
    out << "Contended Lock (" << c.processes << " processes, own Client each, " << fixed(c.seconds, 1) << " s):\n\n"
        << "| figure | " << where << " | single server (above) |\n|---|--:|--:|\n"
        << "| critical sections/s | " << count(c.sections_per_s) << " | "
        << beside(plain ? count(plain->sections_per_s) : "") << " |\n"
        << "| handoff wait p50 | " << micros(c.wait_p50_us) << " | " << beside(plain ? micros(plain->wait_p50_us) : "")
        << " |\n"
        << "| handoff wait p99 | " << micros(c.wait_p99_us) << " | " << beside(plain ? micros(plain->wait_p99_us) : "")
        << " |\n"
        << "| lost updates | " << c.lost_updates << " (counter " << c.counter << ", sections " << c.sections << ") | "
        << beside(plain ? std::to_string(plain->lost_updates) : "") << " |\n\n";
}

void tls_tables(std::ostringstream& out, const Results& r) {
    const TlsCase& t = *r.tls;
    const Ceilings k = ceilings_of(t.ceiling);
    const std::string threads = std::to_string(r.many_threads);
    out << "## TLS: the same pairs over TLS (`rediss://`)\n\n"
        << "A second redis-server with a TLS port and certificates made with openssl (TLS 1.3, verify on). "
           "Its ceiling is `redis-benchmark --tls --cacert` (the same CA file) on the same server in the same run.\n\n";
    ceiling_runs(out, "TLS ceiling", t.ceiling);
    table(out, "figure (TLS)",
          {{"1 thread, one lock: pairs/s", count(t.single.pairs_per_s), count(k.pairs_serial) + " (`-c 1` acquire ÷ 2)",
            ratio(t.single.pairs_per_s, k.pairs_serial)},
           {"1 thread: pair p50", micros(t.single.p50_us), micros(k.pair_p50_us) + " (2 × `-c 1` acquire p50)",
            ratio(t.single.p50_us, k.pair_p50_us)},
           {"1 thread: pair p99", micros(t.single.p99_us), "—", "—"},
           {threads + " threads, own lock each, one Client: pairs/s", count(t.many_pairs_per_s),
            count(k.pairs_pipelined) + " (pipelined acquire ÷ 2)", ratio(t.many_pairs_per_s, k.pairs_pipelined)}});
    if (!r.plain) return;
    out << "TLS overhead: pairs/s over TLS ÷ the same on the plain server above: 1 thread "
        << ratio(t.single.pairs_per_s, r.single.pairs_per_s) << ", " << threads << " threads "
        << ratio(t.many_pairs_per_s, r.many.pairs_per_s) << " (redis-benchmark's own: `-c 1` "
        << ratio(t.ceiling.acquire_serial.ops_per_s, r.ceiling.acquire_serial.ops_per_s) << ", pipelined "
        << ratio(t.ceiling.acquire_pipelined.ops_per_s, r.ceiling.acquire_pipelined.ops_per_s) << ").\n\n";
    if (t.contended) contended_beside(out, "TLS", *t.contended, r);
}

// A cluster figure is compared with the mean of the masters' ceilings: the
// client and all three masters share this machine's cores, so the masters'
// ceilings measured one at a time do not add up.
struct ClusterCeilings {
    double pairs_serial = 0, pairs_pipelined = 0, pair_p50_us = 0;
};

ClusterCeilings cluster_ceilings(const ClusterCase& c) {
    ClusterCeilings k;
    for (const auto& m : c.per_master) {
        k.pairs_serial += m.acquire_serial.ops_per_s / 2 / static_cast<double>(c.per_master.size());
        k.pairs_pipelined += m.acquire_pipelined.ops_per_s / 2 / static_cast<double>(c.per_master.size());
        k.pair_p50_us += 2 * m.acquire_serial.p50_ms * 1e3 / static_cast<double>(c.per_master.size());
    }
    return k;
}

void cluster_tables(std::ostringstream& out, const Results& r) {
    const ClusterCase& c = *r.cluster;
    const ClusterCeilings k = cluster_ceilings(c);
    out << "## Cluster: the same pairs on a local Redis Cluster of " << c.per_master.size() << " masters\n\n"
        << "Each master's ceiling is redis-benchmark against that master alone (`-p` its port, keys under a hash "
           "tag in one of its slots), one master after the other in the same run. The per-master ceiling is the "
           "mean of the masters' figures; it is the comparison because the client and all masters share this "
           "machine's " << "cores, so one master's ceiling is what the whole machine gives one master.\n\n"
        << "| master | acquire EVALSHA, `-c 50 -P 16` | acquire EVALSHA, `-c 1` |\n|---|--:|--:|\n";
    for (std::size_t i = 0; i < c.per_master.size(); ++i)
        out << "| " << i << " | " << count(c.per_master[i].acquire_pipelined.ops_per_s) << " ops/s | "
            << count(c.per_master[i].acquire_serial.ops_per_s) << " ops/s, p50 "
            << fixed(c.per_master[i].acquire_serial.p50_ms, 3) << " ms |\n";
    out << '\n';
    std::string spread;
    for (std::size_t n : c.names_per_master) spread += (spread.empty() ? "" : "/") + std::to_string(n);
    const std::string threads = std::to_string(r.many_threads);
    const auto single = [&](double v) { return r.plain ? count(v) : std::string("—"); };
    out << "| figure | cluster | single server (above) | per-master ceiling | cluster / ceiling |\n|---|--:|--:|--:|--:|\n"
        << "| 1 thread, one lock (one master): pairs/s | " << count(c.single.pairs_per_s) << " | "
        << single(r.single.pairs_per_s) << " | " << count(k.pairs_serial) << " (mean `-c 1` acquire ÷ 2) | "
        << ratio(c.single.pairs_per_s, k.pairs_serial) << " |\n"
        << "| 1 thread: pair p50 | " << micros(c.single.p50_us) << " | "
        << (r.plain ? micros(r.single.p50_us) : "—") << " | " << micros(k.pair_p50_us)
        << " (2 × mean `-c 1` acquire p50) | " << ratio(c.single.p50_us, k.pair_p50_us) << " |\n"
        << "| " << threads << " threads, own lock each (names per master " << spread << "), one Client: pairs/s | "
        << count(c.many_pairs_per_s) << " | " << single(r.many.pairs_per_s) << " | " << count(k.pairs_pipelined)
        << " (mean pipelined acquire ÷ 2) | " << ratio(c.many_pairs_per_s, k.pairs_pipelined) << " |\n\n";
    if (c.contended) contended_beside(out, "cluster (the lock's master)", *c.contended, r);
}

struct Target {
    std::string what, value, ceiling, limit, verdict;
};

std::string verdict(bool met) { return met ? "MET" : "**NOT MET**"; }

const Contended* contended_run(const Results& r, Primitive primitive, int processes) {
    for (const auto* runs : {&r.contended, &r.scaling})
        for (const auto& c : *runs)
            if (c.primitive == primitive && c.processes == processes) return &c;
    return nullptr;
}

// Issue 23's table: each target with the ceiling or peer it is read against, from this run.
std::vector<Target> issue_23_targets(const Results& r, const Ceilings& k) {
    std::vector<Target> all;
    const std::string threads = std::to_string(r.many_threads);
    if (r.plain) {
        all.push_back({threads + " threads, own lock each, one Client: pairs/s ≥ 1.0 × (pipelined acquire ÷ 2)",
                       count(r.many.pairs_per_s),
                       count(k.pairs_pipelined) + " (`-c 50 -P 16` acquire " +
                           count(r.ceiling.acquire_pipelined.ops_per_s) + " ops/s ÷ 2)",
                       count(k.pairs_pipelined), verdict(r.many.pairs_per_s >= k.pairs_pipelined)});
    }
    if (r.held) {
        const HeldLocks& h = *r.held;
        const std::string held = count(static_cast<double>(h.locks));
        all.push_back({"client memory per held lock (" + held +
                           " under the watchdog, one Client): library heap ≤ 256 B",
                       heap(h.library_bytes_per_lock), "—", bytes(256),
                       heap_measurable() ? verdict(h.library_bytes_per_lock <= 256) : "not measured"});
        const bool whole = h.failed == 0 && h.keys_while_held == static_cast<long long>(h.locks) && h.keys_after == 0;
        all.push_back({"held locks: none lost (every acquire and release done; keys " + held + " while held, 0 after)",
                       std::to_string(h.failed) + " failed; keys " + std::to_string(h.keys_while_held) + ", then " +
                           std::to_string(h.keys_after),
                       "—", "0 failed; " + held + ", then 0", verdict(whole)});
    }
    if (r.waiters) {
        const Waiters& w = *r.waiters;
        const std::string at = " (at " + count(static_cast<double>(w.waiters)) + " waiters)";
        all.push_back({"waiters: the run has 1,000,000 waiters (on 100,000 locks; the default)",
                       count(static_cast<double>(w.waiters)), "—", "1,000,000", verdict(w.waiters >= 1'000'000)});
        const bool queued = w.failure.empty();
        all.push_back({"waiters: library heap per waiter ≤ 256 B" + at,
                       queued ? heap(w.library_bytes_per_waiter) : "not measured: not all waiting", "—", bytes(256),
                       !heap_measurable() ? "not measured" : verdict(queued && w.library_bytes_per_waiter <= 256)});
        // No redis-benchmark figure bounds a drain; the server's own CPU per owner change does.
        const std::string server_bound =
            w.server_us_per_change > 0 ? count(1e6 / w.server_us_per_change) + " (server CPU bound)" : "—";
        all.push_back({"waiters: drained at ≥ 50,000 owner changes/s" + at, count(w.handoffs_per_s), server_bound, "50,000",
                       verdict(w.handoffs_per_s >= 50'000)});
        all.push_back({"waiters: each granted exactly once, none left (keys after the drain 0)",
                       std::to_string(w.granted) + " once, " + std::to_string(w.granted_twice) + " twice, " +
                           std::to_string(w.never_granted) + " never; keys " + std::to_string(w.keys_after),
                       "—", count(static_cast<double>(w.waiters)) + " once; keys 0",
                       verdict(w.granted == w.waiters && w.keys_after == 0)});
    }
    const Contended* first = nullptr;
    const Contended* last = nullptr;
    bool all_within = true;  // ≤ 6 at every count: "not growing" from a figure above it would say little
    for (const int processes : {8, 32, 128}) {
        const Contended* lock = contended_run(r, Primitive::lock, processes);
        if (!lock) continue;
        const Contended* fair = contended_run(r, Primitive::fair_lock, processes);
        if (!first) first = lock;
        last = lock;
        all.push_back({"contended Lock, " + std::to_string(processes) +
                           " processes: commands per owner change ≤ 6 (after the warm-up; whole run " +
                           fixed(lock->commands_per_handoff_whole, 1) + ")",
                       fixed(lock->commands_per_handoff, 1),
                       fair ? "FairLock " + fixed(fair->commands_per_handoff, 1) : "—", "6",
                       verdict(lock->handoffs > 0 && lock->commands_per_handoff <= 6)});
        all_within = all_within && lock->handoffs > 0 && lock->commands_per_handoff <= 6;
    }
    if (first && last && first != last) {
        const double growth =
            first->commands_per_handoff > 0 ? last->commands_per_handoff / first->commands_per_handoff : 0;
        all.push_back({"contended Lock: commands per owner change not growing: " + std::to_string(last->processes) +
                           " processes ≤ 1.1 × " + std::to_string(first->processes) +
                           " processes, and ≤ 6 at every count",
                       ratio_of(growth), "—", ratio_of(1.1), verdict(all_within && growth <= 1.1)});
    }
    if (const Contended* lock = contended_run(r, Primitive::lock, 8); lock && r.plain) {
        all.push_back({"contended Lock handoff wait p50 (8 processes) ≤ 2 × one round trip, the round trip being "
                       "release + acquire as the contended tables define it: 2 × `-c 1` acquire p50",
                       micros(lock->wait_p50_us), micros(k.handoff_us), micros(2 * k.handoff_us),
                       verdict(lock->wait_p50_us <= 2 * k.handoff_us)});
    }
    const std::string fresh = "fresh clone, `./run test` (build included) ≤ 15 min on a quiet machine";
    if (r.fresh_test)
        all.push_back({fresh, fixed(r.fresh_test->minutes, 1) + " min (given in " + r.fresh_test->source +
                                  ", not measured by this run)",
                       "—", "15 min", verdict(r.fresh_test->minutes <= 15)});
    else
        all.push_back({fresh, std::string("not measured here: see the CI log (") + fresh_test_variable +
                                  " puts its time here)",
                       "—", "15 min", "not measured"});
    return all;
}

// The targets of earlier issues, still held to.
std::vector<Target> earlier_targets(const Results& r, const Ceilings& k) {
    std::vector<Target> all;
    const std::string threads = std::to_string(r.many_threads);
    auto at_least = [&](const std::string& what, double value, double limit) {
        all.push_back({what, count(value), "—", count(limit), verdict(value >= limit)});
    };
    auto at_most = [&](const std::string& what, double us, double limit_us) {
        all.push_back({what, micros(us), "—", micros(limit_us), verdict(us <= limit_us)});
    };
    if (r.plain) {
        all.push_back({"1-thread pair p50 ≤ 1.5 × (2 × `-c 1` acquire p50)", micros(r.single.p50_us),
                       micros(k.pair_p50_us), micros(1.5 * k.pair_p50_us),
                       verdict(r.single.p50_us <= 1.5 * k.pair_p50_us)});
        const double metrics = median(r.metrics_round_ratios);
        all.push_back({"metrics cost: " + threads + "-thread pairs/s counting ÷ without, median round ≥ 0.97×",
                       ratio_of(metrics), "—", ratio_of(0.97), verdict(metrics >= 0.97)});
    }
    if (r.tls) {
        const Ceilings t = ceilings_of(r.tls->ceiling);
        at_least("TLS 1-thread pairs/s ≥ 0.7 × TLS ceiling (`-c 1` acquire ÷ 2)", r.tls->single.pairs_per_s,
                 0.7 * t.pairs_serial);
        at_least("TLS " + threads + "-thread pairs/s ≥ 0.7 × TLS ceiling (pipelined acquire ÷ 2)",
                 r.tls->many_pairs_per_s, 0.7 * t.pairs_pipelined);
        at_most("TLS 1-thread pair p50 ≤ 1.5 × (2 × TLS `-c 1` acquire p50)", r.tls->single.p50_us, 1.5 * t.pair_p50_us);
        if (r.plain) {
            at_least("TLS 1-thread pairs/s ≥ 0.7 × plain 1-thread pairs/s", r.tls->single.pairs_per_s,
                     0.7 * r.single.pairs_per_s);
            at_least("TLS " + threads + "-thread pairs/s ≥ 0.7 × plain " + threads + "-thread pairs/s",
                     r.tls->many_pairs_per_s, 0.7 * r.many.pairs_per_s);
        }
    }
    if (r.cluster) {
        const ClusterCeilings c = cluster_ceilings(*r.cluster);
        at_least("cluster 1-thread pairs/s ≥ 0.8 × per-master ceiling (mean `-c 1` acquire ÷ 2)",
                 r.cluster->single.pairs_per_s, 0.8 * c.pairs_serial);
        at_most("cluster 1-thread pair p50 ≤ 1.5 × (2 × mean `-c 1` acquire p50)", r.cluster->single.p50_us,
                1.5 * c.pair_p50_us);
        at_least("cluster " + threads + "-thread pairs/s ≥ 0.8 × per-master ceiling (mean pipelined acquire ÷ 2)",
                 r.cluster->many_pairs_per_s, 0.8 * c.pairs_pipelined);
        if (r.plain) {  // the issue's other reading: holdfast on the cluster against holdfast on one server
            at_least("cluster 1-thread pairs/s ≥ 0.8 × single-server 1-thread pairs/s", r.cluster->single.pairs_per_s,
                     0.8 * r.single.pairs_per_s);
            at_least("cluster " + threads + "-thread pairs/s ≥ 0.8 × single-server " + threads + "-thread pairs/s",
                     r.cluster->many_pairs_per_s, 0.8 * r.many.pairs_per_s);
        }
    }
    for (const auto& [where, c] : {std::pair{"TLS", r.tls ? r.tls->contended : std::nullopt},
                                   std::pair{"cluster", r.cluster ? r.cluster->contended : std::nullopt}}) {
        if (!c) continue;
        at_most(std::string(where) + " contended Lock handoff wait p50 ≤ 0.5 ms", c->wait_p50_us, 500);
        all.push_back({std::string(where) + " contended Lock lost updates = 0", std::to_string(c->lost_updates), "—",
                       "0", verdict(c->lost_updates == 0)});
    }
    if (const Contended* lock = contended_run(r, Primitive::lock, 8))
        at_most("contended Lock handoff wait p50 ≤ 0.5 ms", lock->wait_p50_us, 500);
    for (const auto* runs : {&r.contended, &r.scaling})
        for (const auto& c : *runs)
            all.push_back({"contended " + describe(c.primitive) + ", " + std::to_string(c.processes) +
                               " processes: lost updates = 0",
                           std::to_string(c.lost_updates), "—", "0", verdict(c.lost_updates == 0)});
    return all;
}

void target_rows(std::ostringstream& out, const std::vector<Target>& all) {
    out << "| target | measured | ceiling or peer (this run) | limit | verdict |\n|---|--:|--:|--:|---|\n";
    for (const auto& t : all)
        out << "| " << t.what << " | " << t.value << " | " << t.ceiling << " | " << t.limit << " | " << t.verdict
            << " |\n";
    out << '\n';
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

void targets_table(std::ostringstream& out, const Results& r, const Ceilings& k, unsigned cores) {
    out << "## Targets\n\n### Issue 23: close to the server's limit\n\n";
    target_rows(out, issue_23_targets(r, k));
    if (r.plain) many_threads_bound(out, r, k, cores);
    out << "Memory is the heap in use (glibc `mallinfo2`: every arena and mmapped block, chunk headers included) "
           "before and after, the caller's own objects (`Lock` handles, owner strings) made before the first "
           "reading. A figure measured at fewer waiters than the target's 1,000,000 does not show the target met "
           "at 1,000,000.\n\n### Earlier targets\n\n";
    target_rows(out, earlier_targets(r, k));
}

}  // namespace

Machine describe_machine() {
    Machine m;
    const std::time_t now = std::time(nullptr);
    char date[64];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    m.date = date;
    m.cores = static_cast<unsigned>(::sysconf(_SC_NPROCESSORS_ONLN));
    m.cpu = cpu_model();
    m.load = first_line_of("/proc/loadavg");
    return m;
}

std::string render_report(const Results& results, const Machine& machine, bool quick) {
    const Ceilings k = ceilings_of(results.ceiling);
    std::ostringstream out;
    out << "# Benchmarks\n\n"
        << "- Date: " << machine.date << (quick ? " (`--quick` run: short, noisier)" : "") << "\n"
        << "- Machine: " << machine.cores << " cores, " << machine.cpu << "; load average at start: " << machine.load
        << "\n"
        << "- Redis: " << machine.redis_version << ", fresh redis-servers on loopback (plain TCP, TLS, a 3-master cluster) started by the benchmark\n"
        << "- Reproduce: `./run bench` (`--quick` for a short run, `--no-write` to leave this file alone, "
           "`--cases plain,contended,tls,cluster` to pick parts, `--waiters N` for another count of waiters than the target's 1,000,000)"
           "\n\n"
        << "The client and the server share this machine's cores, so the ceiling is what "
        << "redis-benchmark reaches here, not what Redis could do alone. In the ratio column 1.00× means "
        << "at the ceiling: above 1 is better for rates, worse for latencies and command counts.\n\n";
    if (std::atof(machine.load.c_str()) >= static_cast<double>(machine.cores))
        out << "**Busy machine:** the load average at the start was at or above the core count: other processes "
               "(other builds) competed for the cores while this ran, so every figure is lower and noisier than on "
               "a quiet machine. Each ratio compares figures taken minutes apart under that varying load, so it "
               "can move either way; re-run on a quiet machine before reading much into one.\n\n";
    if (results.plain) {
        ceiling_table(out, results.ceiling);
        holdfast_tables(out, results, k, machine.cores);
    }
    if (results.tls) tls_tables(out, results);
    if (results.cluster) cluster_tables(out, results);
    targets_table(out, results, k, machine.cores);
    out << "Method: release keys are pre-loaded with a deep hold so every ceiling release runs the owner's "
           "path (hexists, hincrby, pexpire). Contended handoff wait runs from the previous holder's `unlock()` "
           "call to the new holder's `lock()` return (CLOCK_MONOTONIC in shared memory); only acquisitions by a "
           "different process count. Commands per owner change counts top-level EVALSHA/EVAL/(UN)SUBSCRIBE, "
           "not the commands scripts run inside nor the critical section's GET/SET; the targets read it after "
           "the first quarter of each run (every process has waited once by then, its first SUBSCRIBE behind "
           "it), and the tables give the whole run's too. Pairs/s is pairs over the "
           "whole run, so every stall (the process descheduled on a busy machine) lowers it, for holdfast and "
           "for redis-benchmark alike but not by the same amount; p50 latencies shrug such stalls off.\n";
    return out.str();
}

bool results_correct(const Results& results) {
    for (const auto* runs : {&results.contended, &results.scaling})
        for (const auto& c : *runs)
            if (c.lost_updates != 0) return false;
    if (const auto& h = results.held;
        h && (h->failed != 0 || h->keys_after != 0 || h->keys_while_held != static_cast<long long>(h->locks)))
        return false;
    if (const auto& w = results.waiters; w && (!w->failure.empty() || w->granted != w->waiters || w->keys_after != 0))
        return false;
    if (results.tls && results.tls->contended && results.tls->contended->lost_updates != 0) return false;
    if (results.cluster && results.cluster->contended && results.cluster->contended->lost_updates != 0) return false;
    return true;
}

}  // namespace holdfast::bench
