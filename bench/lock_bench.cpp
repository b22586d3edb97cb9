// lock_bench: holdfast's lock throughput and latency against what
// redis-benchmark gets from the same server, written to BENCHMARKS.md.
//
//   lock_bench [--quick] [--no-write]
//
// Starts its own redis-server; runs the ceiling, then holdfast uncontended,
// then contended. The contended part forks, so each part before it must have
// joined its threads (every Client is destroyed before the next part).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

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

struct Options {
    bool quick = false;
    bool write = true;
};

Options parse_options(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--quick") options.quick = true;
        else if (arg == "--no-write") options.write = false;
        else {
            std::cerr << "usage: lock_bench [--quick] [--no-write]\n"
                         "  --quick     shorter runs (noisier figures)\n"
                         "  --no-write  print the report without writing BENCHMARKS.md\n";
            std::exit(arg == "--help" || arg == "-h" ? 0 : 2);
        }
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

Results measure(std::uint16_t port, const Durations& d) {
    holdfast::Config config;
    config.port = port;
    Results r;
    progress("ceiling (redis-benchmark)");
    r.ceiling = measure_ceiling(port, d);
    progress("uncontended, 1 thread");
    r.single = run_single_thread(config, d.uncontended);
    progress("uncontended, " + std::to_string(many_threads) + " threads");
    r.many_threads = many_threads;
    r.many_pairs_per_s = run_many_threads(config, many_threads, d.uncontended);
    for (const Primitive primitive : {Primitive::lock, Primitive::fair_lock, Primitive::semaphore}) {
        progress("contended " + describe(primitive) + ", " + std::to_string(contended_processes) + " processes");
        r.contended.push_back(run_contended(port, primitive, contended_processes, d.contended));
    }
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    const Options options = parse_options(argc, argv);
    try {
        Machine machine = describe_machine();  // before we load the machine ourselves
        holdfast::support::RedisServer server;
        machine.redis_version = redis_version(server.port());
        const Results results = measure(server.port(), options.quick ? Durations::quick() : Durations{});
        const std::string report = render_report(results, machine, options.quick);
        std::cout << report;
        if (options.write) {
            const std::string path = std::string(HOLDFAST_SOURCE_DIR) + "/BENCHMARKS.md";
            std::ofstream(path) << report;
            std::cerr << "lock_bench: wrote " << path << "\n";
        }
        return results_correct(results) ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "lock_bench: " << e.what() << "\n";
        return 1;
    }
}
