#include "run.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "nemesis.hpp"
#include "redis_server.hpp"
#include "redis_cluster.hpp"
#include "sentinel_group.hpp"
#include "status.hpp"
#include "sync_redis.hpp"
#include "witness.hpp"
#include "workers.hpp"

namespace holdfast::check {
namespace {

using namespace std::chrono_literals;

std::string run_dir(const Options& o, const RunSpec& spec) {
    return o.out + "/" + spec.scenario.name() + "-" + primitive_name(spec.primitive) + "-seed" +
           std::to_string(spec.seed);
}

std::vector<std::string> lock_server_args(const Scenario& scenario) {
    std::vector<std::string> args{"--enable-debug-command", "local"};
    if (scenario.has(Nemesis::restart_persistent))
        for (const char* a : {"--appendonly", "yes", "--appendfsync", "always"}) args.emplace_back(a);
    return args;
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

}  // namespace

RunResult execute_run(const Options& o, const RunSpec& spec, const std::atomic<bool>& interrupted) {
    const std::string dir = run_dir(o, spec);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::mt19937_64 random(spec.seed);
    Schedule schedule = o.schedule;
    if (schedule == Schedule::random)
        schedule = random() % 2 ? Schedule::long_sections : Schedule::short_sections;

    // Under the sentinel-* nemeses the lock server is a Sentinel deployment,
    // which the workers reach by its redis-sentinel:// URI.
    const bool sentinel = std::any_of(spec.scenario.faults.begin(), spec.scenario.faults.end(), needs_sentinel);
    // Under cluster-* a three-master Redis Cluster (with a replica per master
    // under the failover ones), reached by its URI too.
    const bool cluster = std::any_of(spec.scenario.faults.begin(), spec.scenario.faults.end(), needs_cluster);
    std::unique_ptr<support::SentinelGroup> sentinels;
    std::unique_ptr<support::RedisCluster> redis_cluster;
    std::unique_ptr<support::RedisServer> single_server;
    if (sentinel) sentinels = std::make_unique<support::SentinelGroup>("holdfast-check", lock_server_args(spec.scenario));
    else if (cluster) {
        // A replica per master where a primary fails over; a low node timeout
        // so that a killed one is replaced within seconds.
        const bool replicas = spec.scenario.has(Nemesis::cluster_failover) ||
                              spec.scenario.has(Nemesis::cluster_kill_primary) ||
                              spec.scenario.has(Nemesis::cluster_kill_primary_waiting);
        support::ClusterOptions options{.masters = 3, .replicas = replicas ? 1u : 0u,
                                        .node_timeout_ms = replicas ? failover_node_timeout_ms : 5000,
                                        .extra = lock_server_args(spec.scenario)};
        if (replicas) options.extra.insert(options.extra.end(), {"--repl-diskless-sync-delay", "0"});
        redis_cluster = std::make_unique<support::RedisCluster>(options);
    }
    else single_server = std::make_unique<support::RedisServer>(lock_server_args(spec.scenario));
    support::RedisServer& lock_server =
        sentinel ? sentinels->master() : cluster ? redis_cluster->node(0) : *single_server;
    support::RedisServer resource_server;
    SharedStatus status(dir + "/status", true);

    WorkerOptions base;
    base.lock_port = lock_server.port();
    if (sentinel) base.lock_url = sentinels->url();
    if (cluster) base.lock_url = redis_cluster->url();
    base.replica_sync = o.replica_sync;
    base.resource_port = resource_server.port();
    base.locks = o.locks;
    base.lease = o.lease;
    base.timeout = o.client_timeout();
    base.max_section = schedule == Schedule::long_sections ? o.lease * 2 : o.lease / 5;
    base.acquire_wait = o.acquire_wait(spec.scenario);
    base.primitive = spec.primitive;
    base.permits = o.permits;
    base.seed = spec.seed;
    base.status = dir + "/status";
    // Each worker reaches the lock server through a proxy of its own only when
    // a partition may cut it off: other scenarios keep their direct path (and
    // their figures) unchanged.
    std::vector<std::unique_ptr<support::TcpProxy>> proxies;
    std::vector<std::uint16_t> lock_ports;
    if (spec.scenario.has(Nemesis::partition_holder))
        for (int slot = 0; slot < o.processes; ++slot) {
            proxies.push_back(std::make_unique<support::TcpProxy>(lock_server.port()));
            lock_ports.push_back(proxies.back()->port());
        }
    // Under revoke-rights each worker slot is an ACL user of its own, whose
    // channels the nemesis takes away from a holder.
    if (spec.scenario.has(Nemesis::revoke_rights)) {
        if (sentinel || cluster) throw UsageError("revoke-rights acts on a single lock server: combine it with no "
                                                  "sentinel-* or cluster-* nemesis");
        support::SyncRedis admin(lock_server.port());
        for (int slot = 0; slot < o.processes; ++slot)
            admin.command({"ACL", "SETUSER", acl_user_of(slot), "on", std::string(">") + acl_password, "~*", "&*",
                           "+@all"});
        base.acl_users = true;
    }
    Workers workers(base, dir, o.processes, lock_ports);
    HistoryWriter nemesis_log(dir + "/nemesis.log");
    NemesisRunner nemesis(spec.scenario, spec.primitive, o.lease, o.locks, random(), lock_server, workers, status.page(),
                          nemesis_log, proxies, sentinels.get(), redis_cluster.get(), dir, o.replica_sync);

    RunFacts facts;
    facts.dir = dir;
    facts.lease = o.lease;
    facts.timeout = o.client_timeout();
    facts.primitive = spec.primitive;
    facts.permits = spec.primitive == Primitive::semaphore ? o.permits : 1;
    facts.strict = o.strict;
    facts.replicas_synced = o.replica_sync != "off";
    facts.locks = o.locks;
    // Every data node: a master it reads, a replica it skips.
    std::vector<std::uint16_t> data_ports;
    if (sentinel)
        for (const auto& node : sentinels->nodes) data_ports.push_back(node->port());
    else if (cluster)
        for (std::size_t i = 0; i < redis_cluster->size(); ++i) data_ports.push_back(redis_cluster->port(i));
    else data_ports.push_back(lock_server.port());
    auto witness = std::make_unique<Witness>(data_ports, cluster, o.locks, std::max(Duration(5), o.lease / 10),
                                             dir + "/witness.log");
    facts.start = now_ns();
    workers.start();
    const Nanos end = facts.start + to_ns(o.duration);
    Nanos next_fault = facts.start + to_ns(o.lease);
    long faults = 0;
    for (Nanos now = facts.start; now < end && !interrupted.load(); now = now_ns()) {
        for (const auto& e : workers.reap_unexpected()) facts.worker_failures.push_back(describe_exit(e, "mid-run"));
        show_progress(o, spec, now - facts.start, status.page(), o.processes, faults);
        if (!spec.scenario.has(Nemesis::none) && now >= next_fault) {
            faults += nemesis.strike();
            next_fault = now_ns() + to_ns(nemesis.gap());
        }
        std::this_thread::sleep_for(5ms);
    }
    facts.stop = now_ns();
    status.page().stop.store(1);
    // A worker finishes its hold: one acquire wait, a critical section, calls that may time out.
    const Nanos deadline = facts.stop + to_ns(base.acquire_wait + base.max_section + 4 * base.timeout) + 5'000'000'000;
    for (const auto& e : workers.stop(deadline)) facts.worker_failures.push_back(describe_exit(e, "at the stop"));
    witness.reset();
    facts.killed = workers.killed();
    for (int lock = 0; lock < o.locks; ++lock) facts.resources.push_back(read_resource(resource_server.port(), lock));
    if (o.progress && ::isatty(STDERR_FILENO)) std::fputs("\r\033[K", stderr);

    RunResult result = check_run(facts);
    // The deployment's logs go with its temp dirs: keep them where the run
    // failed or a failover was unusually slow, to explain it later.
    if (sentinels && (result.violations() || !nemesis.unusual().empty())) {
        const std::string logs = dir + "/deployment-logs";
        sentinels->keep_logs(logs);
        std::string why = result.violations() ? "the run failed\n" : "";
        for (const auto& u : nemesis.unusual()) why += u + "\n";
        std::ofstream(logs + "/why.txt") << why;
        std::fprintf(stderr, "holdfast-check: %s seed %llu: %s; the sentinels' and servers' logs are in %s\n",
                     spec.scenario.name().c_str(), static_cast<unsigned long long>(spec.seed),
                     result.violations() ? "violations" : "unusually slow failover", logs.c_str());
    }
    result.scenario = spec.scenario.name();
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
