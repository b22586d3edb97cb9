#include "run.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "deployment.hpp"
#include "nemesis.hpp"
#include "redis_server.hpp"
#include "stall_monitor.hpp"
#include "status.hpp"
#include "sweep.hpp"
#include "unlock_listener.hpp"
#include "witness.hpp"
#include "workers.hpp"

namespace holdfast::check {
namespace {

using namespace std::chrono_literals;

std::string run_dir(const Options& o, const RunSpec& spec) {
    return o.out + "/" + spec.scenario.name() + "-" + primitive_name(spec.primitive) + "-seed" +
           std::to_string(spec.seed);
}

std::string describe_exit(const Workers::Exit& e, const std::string& when) {
    const std::string how = e.status < 0 ? "did not stop within its deadline and was killed"
                                         : "exited with status " + std::to_string(e.status);
    return "worker " + std::to_string(e.worker) + " " + how + " " + when + "; see " + e.log;
}

// A status line rewritten in place, on a terminal only.
void show_progress(const Options& o, const RunSpec& spec, Nanos elapsed, StatusPage& page, int slots, long faults) {
    if (!o.progress || !::isatty(STDERR_FILENO)) return;
    long holds = 0;
    for (int s = 0; s < slots; ++s) holds += page.slots[s].acquisitions.load();
    std::fprintf(stderr, "\r[%d/%d] %s %s seed %llu: %5.1fs/%llds, %ld holds, %ld faults   ", spec.index, spec.total,
                 spec.scenario.name().c_str(), primitive_name(spec.primitive).c_str(),
                 static_cast<unsigned long long>(spec.seed), double(elapsed) / 1e9,
                 static_cast<long long>(o.duration.count() / 1000), holds, faults);
}

// What every worker of the run is told; Workers fills in the rest per worker.
WorkerOptions worker_base(const Options& o, const RunSpec& spec, const Scenario& scenario, Deployment& deployment,
                          Schedule schedule, std::uint16_t resource_port, const std::string& dir) {
    WorkerOptions base;
    base.lock_port = deployment.first_master().port();
    base.lock_url = deployment.url();
    base.replica_sync = o.replica_sync;
    base.replica_sync_timeout = o.replica_sync_wait(scenario);
    base.resource_port = resource_port;
    base.locks = o.locks;
    base.lease = o.lease;
    base.timeout = o.client_timeout();
    base.max_section = schedule == Schedule::long_sections ? o.lease * 2 : o.lease / 5;
    base.acquire_wait = o.acquire_wait(scenario);
    base.primitive = spec.primitive;
    base.permits = o.permits;
    base.seed = spec.seed;
    base.status = dir + "/status";
    // Each worker slot an ACL user of its own, whose rights these nemeses narrow.
    base.acl_users = scenario.has(Nemesis::revoke_rights) || scenario.has(Nemesis::narrow_acl);
    base.relock = scenario.has(Nemesis::pause_replica);
    return base;
}

RunFacts run_facts(const Options& o, const RunSpec& spec, const std::string& dir) {
    RunFacts facts;
    facts.dir = dir;
    facts.lease = o.lease;
    facts.timeout = o.client_timeout();
    facts.primitive = spec.primitive;
    facts.permits = is_semaphore(spec.primitive) ? o.permits : 1;
    facts.strict = o.strict;
    facts.replicas_synced = o.replica_sync != "off";
    facts.locks = o.locks;
    return facts;
}

// The workload under the nemesis for the run's duration (or until
// interrupted); then the workers finish their hold and exit.
void drive(const Options& o, const RunSpec& spec, const Scenario& scenario, const WorkerOptions& base, Workers& workers,
           NemesisRunner& nemesis, StatusPage& page, const std::atomic<bool>& interrupted, RunFacts& facts) {
    facts.start = now_ns();
    workers.start();
    const Nanos end = facts.start + to_ns(o.duration);
    Nanos next_fault = facts.start + to_ns(o.lease);
    long faults = 0;
    for (Nanos now = facts.start; now < end && !interrupted.load(); now = now_ns()) {
        for (const auto& e : workers.reap_unexpected()) facts.worker_failures.push_back(describe_exit(e, "mid-run"));
        show_progress(o, spec, now - facts.start, page, o.processes, faults);
        if (!scenario.has(Nemesis::none) && now >= next_fault) {
            faults += nemesis.strike();
            next_fault = now_ns() + to_ns(nemesis.gap());
        }
        std::this_thread::sleep_for(5ms);
    }
    facts.stop = now_ns();
    page.stop.store(1);
    // A worker finishes its hold: one acquire wait, a critical section, calls that may time out.
    const Nanos deadline = facts.stop + to_ns(base.acquire_wait + base.max_section + 4 * base.timeout) + 5'000'000'000;
    for (const auto& e : workers.stop(deadline)) facts.worker_failures.push_back(describe_exit(e, "at the stop"));
    facts.killed = workers.killed();
    if (o.progress && ::isatty(STDERR_FILENO)) std::fputs("\r\033[K", stderr);
}

// The deployment's logs go with its temp dirs: keep them where the run
// failed or a failover was unusually slow, to explain it later.
void keep_logs(Deployment& deployment, const RunSpec& spec, const RunResult& result, const NemesisRunner& nemesis,
               const std::string& dir) {
    if (!deployment.sentinels() || (!result.violations() && nemesis.unusual().empty())) return;
    const std::string logs = dir + "/deployment-logs";
    deployment.sentinels()->keep_logs(logs);
    std::string why = result.violations() ? "the run failed\n" : "";
    for (const auto& u : nemesis.unusual()) why += u + "\n";
    std::ofstream(logs + "/why.txt") << why;
    std::fprintf(stderr, "holdfast-check: %s seed %llu: %s; the sentinels' and servers' logs are in %s\n",
                 spec.scenario.name().c_str(), static_cast<unsigned long long>(spec.seed),
                 result.violations() ? "violations" : "unusually slow failover", logs.c_str());
}

}  // namespace

RunResult execute_run(const Options& o, const RunSpec& spec, const std::atomic<bool>& interrupted) {
    const std::string dir = run_dir(o, spec);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::mt19937_64 random(spec.seed);
    Schedule schedule = o.schedule;
    if (schedule == Schedule::random)
        schedule = random() % 2 ? Schedule::long_sections : Schedule::short_sections;
    const Topology topology = topology_of(spec.scenario, o.topology);
    const Scenario scenario = mixed(spec.scenario, topology, spec.seed);

    const bool acl = scenario.has(Nemesis::revoke_rights) || scenario.has(Nemesis::narrow_acl);
    Deployment deployment(topology, scenario, acl ? o.processes : 0);
    support::RedisServer resource_server;
    SharedStatus status(dir + "/status", true);
    const WorkerOptions base = worker_base(o, spec, scenario, deployment, schedule, resource_server.port(), dir);
    // Each worker reaches the lock server through a proxy of its own only when
    // a partition may cut it off: other scenarios keep their direct path (and
    // their figures) unchanged.
    std::vector<std::unique_ptr<support::TcpProxy>> proxies;
    std::vector<std::uint16_t> lock_ports;
    if (scenario.has(Nemesis::partition_holder))
        for (int slot = 0; slot < o.processes; ++slot) {
            proxies.push_back(std::make_unique<support::TcpProxy>(deployment.first_master().port()));
            lock_ports.push_back(proxies.back()->port());
        }
    Workers workers(base, dir, o.processes, lock_ports);
    HistoryWriter nemesis_log(dir + "/nemesis.log");
    NemesisRunner nemesis(scenario, spec.primitive, o.lease, o.locks, random(), deployment, workers, status.page(),
                          nemesis_log, proxies, dir, o.replica_sync);

    RunFacts facts = run_facts(o, spec, dir);
    const bool cluster = topology == Topology::cluster;
    const bool group = spec.primitive == Primitive::group;
    auto witness = std::make_unique<Witness>(deployment.data_ports(), cluster, group, o.locks,
                                             std::max(Duration(5), o.lease / 10), dir + "/witness.log");
    // Sharded pub/sub on a cluster: no pattern subscription hears it.
    auto listener = cluster ? nullptr : std::make_unique<UnlockListener>(deployment.data_ports(), dir + "/unlocks.log");
    StallMonitor stalls;
    drive(o, spec, scenario, base, workers, nemesis, status.page(), interrupted, facts);
    facts.stalls = stalls.stop();
    {
        std::ofstream log(dir + "/stalls.log");  // from, to (ns): kept with the histories
        for (const Stall& s : facts.stalls) log << s.from << ' ' << s.to << '\n';
    }
    witness.reset();
    listener.reset();
    sweep(deployment, group, dir + "/sweep.log");
    for (int lock = 0; lock < o.locks; ++lock) facts.resources.push_back(read_resource(resource_server.port(), lock));

    RunResult result = check_run(facts);
    keep_logs(deployment, spec, result, nemesis, dir);
    result.scenario = spec.scenario.name();
    result.topology = topology;
    result.primitive = spec.primitive;
    result.seed = spec.seed;
    result.schedule = schedule == Schedule::long_sections ? "long" : "short";
    std::ofstream(dir + "/findings.txt") << [&] {
        std::string text;
        for (const auto& f : result.findings) text += f + "\n";
        return text;
    }();
    return result;
}

}  // namespace holdfast::check
