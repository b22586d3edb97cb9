// lock_bench: holdfast's lock throughput and latency against what
// redis-benchmark gets from the same server, written to BENCHMARKS.md.
//
//   lock_bench [--quick] [--no-write] [--waiters N] [--cases plain,contended,tls,cluster]
//
// Starts its own redis-server; runs the ceiling, then holdfast uncontended,
// the held locks' and the waiters' memory, then contended (8 processes, then
// Lock and FairLock at 32 and 128); then the TLS case and the cluster case on
// servers of their own. The contended part forks, so each part before it must have joined its
// threads (every Client is destroyed before the next part).
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "capacity.hpp"
#include "ceiling.hpp"
#include "contended.hpp"
#include "redis_server.hpp"
#include "report.hpp"
#include "sync_redis.hpp"
#include "uncontended.hpp"

namespace {

using namespace holdfast::bench;

constexpr std::size_t many_threads = 64;
constexpr int contended_processes = 8;
// Commands per owner change must not grow with the processes waiting: measured at these too.
constexpr int scaling_processes[] = {32, 128};
// The held locks and the waiters run in their own database, so DBSIZE counts only theirs.
constexpr int capacity_database = 1;

struct Options {
    bool quick = false;
    bool write = true;
    bool plain = true, contended = true, tls = true, cluster = true;
    std::size_t waiters = 0;  // 0: the default of the run's Durations
};

[[noreturn]] void usage(int status) {
    std::cerr << "usage: lock_bench [--quick] [--no-write] [--waiters N] [--cases LIST]\n"
                 "  --quick       shorter runs (noisier figures)\n"
                 "  --no-write    print the report without writing BENCHMARKS.md\n"
                 "  --waiters N   waiters in the waiters' run, on N / 10 locks (default 1000000, the\n"
                 "                target's count; --quick 10000)\n"
                 "  --cases LIST  comma-separated parts to run (default all): plain (ceiling and\n"
                 "                uncontended on one server), contended (needs plain), tls, cluster\n";
    std::exit(status);
}

void parse_cases(const std::string& list, Options& options) {
    options.plain = options.contended = options.tls = options.cluster = false;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t end = std::min(list.find(',', start), list.size());
        const std::string name = list.substr(start, end - start);
        if (name == "plain") options.plain = true;
        else if (name == "contended") options.plain = options.contended = true;
        else if (name == "tls") options.tls = true;
        else if (name == "cluster") options.cluster = true;
        else {
            std::cerr << "lock_bench: unknown case '" << name << "'\n";
            usage(2);
        }
        start = end + 1;
    }
}

Options parse_options(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--quick") options.quick = true;
        else if (arg == "--no-write") options.write = false;
        else if (arg == "--cases" && i + 1 < argc) parse_cases(argv[++i], options);
        else if (arg == "--waiters" && i + 1 < argc) {
            options.waiters = std::strtoul(argv[++i], nullptr, 10);
            if (options.waiters < 10) usage(2);
        }
        else usage(arg == "--help" || arg == "-h" ? 0 : 2);
    }
    return options;
}

std::string redis_version(std::uint16_t port) {
    holdfast::support::SyncRedis raw(port);
    const std::string info = raw.string({"INFO", "server"});
    const auto at = info.find("redis_version:");
    if (at == std::string::npos) return "unknown";
    const auto start = at + std::strlen("redis_version:");
    return info.substr(start, info.find_first_of("\r\n", start) - start);
}

void progress(const std::string& what) { std::cerr << "lock_bench: " << what << "...\n"; }

Results measure(std::uint16_t port, const Durations& d, const Options& options) {
    holdfast::Config config;
    config.port = port;
    Results r;
    r.many_threads = many_threads;
    if (const char* minutes = std::getenv(fresh_test_variable); minutes && *minutes)
        r.fresh_test = FreshTest{std::atof(minutes), fresh_test_variable};
    if (options.plain) {
        r.plain = true;
        progress("ceiling (redis-benchmark)");
        r.ceiling = measure_ceiling(port, d);
        progress("uncontended, 1 thread");
        r.single = run_single_thread(config, d.uncontended);
        progress("uncontended, " + std::to_string(many_threads) + " threads");
        r.many = run_many(config, many_threads, d.uncontended, Callers::threads);
        progress("uncontended, " + std::to_string(many_threads) + " async chains");
        r.many_async = run_many(config, many_threads, d.uncontended, Callers::async_chains);
        // Alternating rounds (ABBA), so that a drift in the machine's load falls on both;
        // the median of the rounds' ratios, since one disturbed round moves a mean.
        const int rounds = options.quick ? 2 : 8;
        progress("metrics cost: " + std::to_string(many_threads) + " threads, Config::metrics off and on, " +
                 std::to_string(rounds) + " rounds");
        holdfast::Config counting = config, silent = config;
        silent.metrics = false;
        for (int round = 0; round < rounds; ++round) {
            const bool off_first = round % 2 == 0;
            double off = 0, on = 0;
            if (off_first) off = run_many_threads(silent, many_threads, d.metrics_round);
            on = run_many_threads(counting, many_threads, d.metrics_round);
            if (!off_first) off = run_many_threads(silent, many_threads, d.metrics_round);
            r.metrics_off_pairs_per_s += off / rounds;
            r.metrics_on_pairs_per_s += on / rounds;
            r.metrics_round_ratios.push_back(on / off);
        }
        holdfast::Config capacity = config;
        capacity.database = capacity_database;
        progress("held locks: " + std::to_string(d.held_locks) + " under the watchdog, one Client");
        r.held = run_held_locks(capacity, d.held_locks);
        const std::size_t waiters = options.waiters ? options.waiters : d.waiters;
        progress("waiters: " + std::to_string(waiters) + " on " + std::to_string(waiters / 10) + " locks, one Client");
        const auto drain_limit = std::chrono::seconds(std::max<std::size_t>(120, waiters / 2000));
        r.waiters = run_waiters(capacity, waiters, waiters / 10, drain_limit);
    }
    if (options.contended) {
        for (const Primitive primitive : {Primitive::lock, Primitive::fair_lock, Primitive::semaphore}) {
            progress("contended " + describe(primitive) + ", " + std::to_string(contended_processes) + " processes");
            r.contended.push_back(run_contended({config, port}, primitive, contended_processes, d.contended));
        }
        for (const int processes : scaling_processes)
            for (const Primitive primitive : {Primitive::lock, Primitive::fair_lock}) {
                progress("contended " + describe(primitive) + ", " + std::to_string(processes) + " processes");
                r.scaling.push_back(run_contended({config, port}, primitive, processes, d.contended_scaling));
            }
    }
    if (options.tls) {
        progress("TLS: ceiling (redis-benchmark --tls), then uncontended and contended Lock");
        r.tls = run_tls_case(many_threads, options.contended ? contended_processes : 0, d);
    }
    if (options.cluster) {
        progress("cluster: ceiling per master (redis-benchmark), then uncontended and contended Lock");
        r.cluster = run_cluster_case(many_threads, options.contended ? contended_processes : 0, d);
    }
    return r;
}

// The hand-written section at the end of BENCHMARKS.md, if any: A/B runs of
// two commits, interleaved, and profiles, which one run of this tree cannot
// show. Kept as is.
std::string kept_comparisons(const std::string& path) {
    std::ifstream in(path);
    const std::string old((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto at = old.find("\n## Analyses");
    return at == std::string::npos ? std::string() : old.substr(at);
}

}  // namespace

int main(int argc, char** argv) {
    const Options options = parse_options(argc, argv);
    try {
        Machine machine = describe_machine();  // before we load the machine ourselves
        holdfast::support::RedisServer server;
        machine.redis_version = redis_version(server.port());
        const Results results = measure(server.port(), options.quick ? Durations::quick() : Durations{}, options);
        const std::string report = render_report(results, machine, options.quick);
        std::cout << report;
        if (options.write) {
            const std::string path = std::string(HOLDFAST_SOURCE_DIR) + "/BENCHMARKS.md";
            const std::string kept = kept_comparisons(path);  // read before the file is truncated
            std::ofstream(path) << report << kept;
            std::cerr << "lock_bench: wrote " << path << "\n";
        }
        return results_correct(results) ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "lock_bench: " << e.what() << "\n";
        return 1;
    }
}
