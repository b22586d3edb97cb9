// holdfast-check: runs a real workload of P processes on real redis-servers
// through real faults and checks the merged history (RELIABILITY.md).
// The same executable is the coordinator and, exec'd with `worker`, each client process.
#include <signal.h>
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "check.hpp"
#include "cli/duration.hpp"
#include "report.hpp"
#include "run.hpp"
#include "worker.hpp"

namespace holdfast::check {
namespace {

constexpr const char* description =
    "holdfast-check: P client processes loop over K locks (or semaphores) on a throwaway redis-server while\n"
    "a nemesis injects faults; every step is logged and the merged history is checked for overlapping holds\n"
    "(more than N for a semaphore; sharing a value, for a group lock), lost updates, stale writes, token\n"
    "order, FIFO order (fair locks) and liveness; what the server held is checked against what the workers\n"
    "believed (keys without expiry, lost permits, holds nobody believes, unlocks announced by refused\n"
    "releases). See RELIABILITY.md.";

constexpr const char* footer =
    "Exit status: 0 no violation of what the configuration promises; 1 violations (listed, with the\n"
    "command that replays each failing seed); 2 bad usage; 3 the checker itself could not run.\n"
    "Examples:\n"
    "  holdfast-check --nemesis all --duration 10s\n"
    "  holdfast-check --nemesis pause-holder --primitive both --runs 5\n"
    "  holdfast-check --nemesis kill-holder --primitive semaphore --permits 3\n"
    "  holdfast-check --nemesis partition-holder --seed 1 --lease 500ms --primitive all\n"
    "  holdfast-check --nemesis pause-replica,narrow-acl,mix --topology sentinel --runs 20\n"
    "  holdfast-check --nemesis kill-holder+kill-connections --seed 42 --processes 6 --lease 2s";

std::atomic<bool> interrupted{false};

void on_interrupt(int) { interrupted.store(true); }

// A DURATION option parsed with the holdfast CLI's rules, at least `minimum`.
CLI::Option* add_duration(CLI::App& app, const std::string& flags, Duration& target, Duration minimum,
                          const std::string& help) {
    return app
        .add_option_function<std::string>(
            flags,
            [&target, minimum, flags](const std::string& text) {
                try {
                    target = cli::parse_duration(text);
                } catch (const cli::UsageError& e) {
                    throw CLI::ValidationError(flags, e.what());
                }
                if (target < minimum)
                    throw CLI::ValidationError(flags, "'" + text + "' is below the minimum of " +
                                                          cli::format_duration(minimum));
            },
            help)
        ->type_name("DURATION");
}

void add_worker_options(CLI::App& worker, WorkerOptions& w) {
    worker.add_option("--id", w.id)->required();
    worker.add_option("--slot", w.slot)->required()->check(CLI::Range(0, max_processes - 1));
    worker.add_option("--lock-port", w.lock_port)->required();
    worker.add_option("--resource-port", w.resource_port)->required();
    worker.add_option("--locks", w.locks)->required()->check(CLI::PositiveNumber);
    worker.add_option_function<long>("--lease-ms", [&w](long v) { w.lease = Duration(v); })->required();
    worker.add_option_function<long>("--timeout-ms", [&w](long v) { w.timeout = Duration(v); })->required();
    worker.add_option_function<long>("--section-ms", [&w](long v) { w.max_section = Duration(v); })->required();
    worker.add_option_function<long>("--acquire-wait-ms", [&w](long v) { w.acquire_wait = Duration(v); })->required();
    worker.add_option_function<std::string>("--primitive", [&w](const std::string& p) {
        w.primitive = parse_primitives(p).front();
    });
    worker.add_option("--permits", w.permits)->required();
    worker.add_option("--worker-seed", w.seed)->required();
    worker.add_option("--history", w.history)->required();
    worker.add_option("--status", w.status)->required();
    worker.add_option("--lock-url", w.lock_url);
    worker.add_option("--replica-sync", w.replica_sync);
    worker.add_option_function<long>("--replica-sync-timeout-ms", [&w](long v) { w.replica_sync_timeout = Duration(v); });
    worker.add_flag("--acl-users", w.acl_users);
    worker.add_flag("--relock", w.relock);
}

std::string make_out_dir(const std::string& requested) {
    if (!requested.empty()) {
        std::filesystem::create_directories(requested);
        return requested;
    }
    char pattern[] = "/tmp/holdfast-check-XXXXXX";
    if (!::mkdtemp(pattern)) throw std::runtime_error("cannot create a directory for the histories under /tmp");
    return pattern;
}

int coordinate(Options& o, const std::string& nemeses, const std::string& primitives,
               std::optional<std::uint64_t> seed) {
    o.scenarios = parse_scenarios(nemeses);
    o.primitives = parse_primitives(primitives);
    o.seed = seed ? *seed : std::random_device{}();
    if (nemeses == "all" && o.topology != Topology::automatic)  // each nemesis that runs there
        std::erase_if(o.scenarios, [&](const Scenario& s) { return !runs_on(s.faults.front(), o.topology); });
    for (const Scenario& scenario : o.scenarios) topology_of(scenario, o.topology);  // each runs there
    if (o.duration < o.lease * 3)
        throw UsageError("--duration " + cli::format_duration(o.duration) + " is too short for --lease " +
                         cli::format_duration(o.lease) + ": give it at least 3 leases");
    o.out = make_out_dir(o.out);
    ::signal(SIGINT, on_interrupt);
    ::signal(SIGTERM, on_interrupt);

    const int total = static_cast<int>(o.scenarios.size() * o.primitives.size()) * o.runs;
    std::cerr << "holdfast-check: seed " << o.seed << ", " << total << " run(s) of " << cli::format_duration(o.duration)
              << ", histories in " << o.out << '\n';
    std::vector<RunResult> results;
    int index = 0;
    for (const Scenario& scenario : o.scenarios)
        for (Primitive primitive : o.primitives)
            for (int run = 0; run < o.runs && !interrupted.load(); ++run) {
                const RunSpec spec{scenario, primitive, o.seed + static_cast<std::uint64_t>(run), ++index, total};
                results.push_back(execute_run(o, spec, interrupted));
                if (o.progress)
                    std::cerr << "[" << index << "/" << total << "] " << run_line(results.back()) << '\n';
            }
    std::ofstream file(o.out + "/report.md");
    write_report(file, o, results);
    write_report(std::cout, o, results);
    if (interrupted.load()) {
        std::cerr << "holdfast-check: interrupted; the report covers the runs finished so far\n";
        return 130;
    }
    const bool failed = std::any_of(results.begin(), results.end(), [](const RunResult& r) { return r.violations(); });
    return failed ? 1 : 0;
}

}  // namespace
}  // namespace holdfast::check

int main(int argc, char** argv) {
    namespace check = holdfast::check;
    check::Options o;
    check::WorkerOptions w;
    std::string nemeses = "all", primitives = "rlock", schedule = "random", topology = "auto";
    std::optional<std::uint64_t> seed;
    bool fenced = false, quiet = false;

    CLI::App app(check::description, "holdfast-check");
    app.footer(check::footer);
    app.failure_message([](const CLI::App*, const CLI::Error& e) {
        return "holdfast-check: " + std::string(e.what()) + "\nRun with --help for more information.\n";
    });
    app.add_option("--seed", seed, "First seed; run i uses seed + i (default: random, printed)");
    app.add_option("--runs", o.runs, "Runs (seeds) per nemesis and primitive")->capture_default_str()->check(CLI::Range(1, 100000));
    app.add_option("-p,--processes", o.processes, "Client processes")
        ->capture_default_str()
        ->check(CLI::Range(2, check::max_processes));
    app.add_option("-k,--locks", o.locks, "Locks the processes share")->capture_default_str()->check(CLI::Range(1, 1000));
    check::add_duration(app, "--lease", o.lease, check::Duration(100), "Lease, renewed by the watchdog every third [1s]");
    check::add_duration(app, "--timeout", o.timeout, check::Duration(10),
                        "The clients' command timeout (Config::timeout) [the lease]");
    check::add_duration(app, "-d,--duration", o.duration, check::Duration(1000), "Length of each run [10s]");
    app.add_option("-n,--nemesis", nemeses,
                   "Scenarios: 'all' (each nemesis alone, in turn), 'mix' (every nemesis the topology allows, drawn "
                   "at random), or a comma list of nemeses; join with + to "
                   "combine (kill-holder+script-flush). Nemeses: none, kill-holder, pause-holder, kill-connections, "
                   "kill-pubsub, script-flush, pause-server, restart-persistent, restart-volatile, debug-sleep, "
                   "partition-holder, sentinel-failover, sentinel-kill-master, cluster-migrate-slot, cluster-failover, "
                   "cluster-kill-primary, revoke-rights, sentinel-failover-release, cluster-kill-primary-waiting, "
                   "sentinel-hang, pause-replica, narrow-acl")
        ->capture_default_str();
    app.add_option("--topology", topology,
                   "Where the lock server runs: server (one redis-server), replicated (one with a replica), sentinel "
                   "(a master, a replica, three sentinels), cluster (three masters), or auto: the first of these "
                   "every nemesis of a scenario runs on (mix: replicated)")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "server", "replicated", "sentinel", "cluster"}));
    app.add_option("--primitive", primitives,
                   "rlock, fenced (FencedLock), fair (FairLock), rwlock (ReadWriteLock), semaphore, expirable "
                   "(PermitExpirableSemaphore), nonreentrant (NonReentrantLock), nonreentrant-fair "
                   "(NonReentrantFairLock), group (MultiValueLock: each hold takes 2 or 3 of the values a, b, c of "
                   "the lock's group), both (rlock and fenced), all, or a comma list")
        ->capture_default_str();
    app.add_option("--permits", o.permits, "Permits of each semaphore (--primitive semaphore, expirable), set if absent")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_flag("--fenced", fenced, "Same as --primitive fenced: FencedLock, the resource refusing stale tokens");
    app.add_option("--schedule", schedule, "Critical sections: short (0-lease/5), long (0-2 x lease) or random per seed")
        ->capture_default_str()
        ->check(CLI::IsMember({"random", "short", "long"}));
    app.add_option("-o,--out", o.out, "Directory for histories and report.md (default: a new one under /tmp)");
    app.add_flag("--strict", o.strict,
                 "Count every anomaly as a violation, also those a fault explains (a paused holder's overlaps): "
                 "shows that the checker fails what it should");
    app.add_option("--replica-sync", o.replica_sync,
                   "The workers' Config::replica_sync where the master has replicas: off, wait or required")
        ->capture_default_str()
        ->check(CLI::IsMember({"off", "wait", "required"}));
    check::add_duration(app, "--replica-sync-timeout", o.replica_sync_timeout, check::Duration(10),
                        "The workers' Config::replica_sync_timeout [a quarter of the lease, at most 1s, under "
                        "pause-replica; else 1s]");
    app.add_flag("-q,--quiet", quiet, "No progress on stderr");
    auto* worker = app.add_subcommand("worker", "")->group("");  // internal: one client process
    check::add_worker_options(*worker, w);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    try {
        if (worker->parsed()) return check::run_worker(w);
        o.progress = !quiet;
        o.topology = check::parse_topology(topology);
        o.schedule = schedule == "short"  ? check::Schedule::short_sections
                     : schedule == "long" ? check::Schedule::long_sections
                                          : check::Schedule::random;
        return check::coordinate(o, nemeses, fenced ? "fenced" : primitives, seed);
    } catch (const check::UsageError& e) {
        std::cerr << "holdfast-check: " << e.what() << "\nRun with --help for more information.\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "holdfast-check: " << e.what() << '\n';
        return 3;
    }
}
