#include "report.hpp"

#include "figures.hpp"
#include "holdfast/lock.hpp"
#include "targets.hpp"

#include <unistd.h>

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

struct Row {
    std::string figure, holdfast, ceiling, ratio;
};

void table(std::ostringstream& out, const std::string& first_column, const std::vector<Row>& rows) {
    out << "| " << first_column << " | holdfast | ceiling | holdfast / ceiling |\n|---|--:|--:|--:|\n";
    for (const auto& r : rows) out << "| " << r.figure << " | " << r.holdfast << " | " << r.ceiling << " | " << r.ratio << " |\n";
    out << '\n';
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
    targets_section(out, results, k, machine.cores);
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
