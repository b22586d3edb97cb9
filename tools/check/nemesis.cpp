#include "nemesis.hpp"

#include <signal.h>

#include <thread>

#include "holdfast/holdfast.hpp"
#include "sync_redis.hpp"

namespace holdfast::check {

using namespace std::chrono_literals;

std::string ms_text(Nanos ns) { return std::to_string(ns / 1'000'000) + "ms"; }

bool replica_in_sync(std::uint16_t master_port, std::chrono::seconds within) {
    try {
        support::SentinelGroup::wait_for_replicas(master_port, 1, within);
        return true;
    } catch (const std::runtime_error&) {
        return false;
    }
}

NemesisRunner::NemesisRunner(const Scenario& scenario, Primitive primitive, Duration lease, int locks,
                             std::uint64_t seed, Deployment& deployment, Workers& workers, StatusPage& status,
                             HistoryWriter& log, std::vector<std::unique_ptr<support::TcpProxy>>& proxies,
                             std::string dir, std::string replica_sync)
    : scenario_(scenario),
      primitive_(primitive),
      lease_(lease),
      locks_(locks),
      random_(seed),
      deployment_(deployment),
      server_(deployment.first_master()),
      workers_(workers),
      status_(status),
      log_(log),
      proxies_(proxies),
      sentinels_(deployment.sentinels()),
      cluster_(deployment.cluster()),
      dir_(std::move(dir)),
      replica_sync_(std::move(replica_sync)) {}

NemesisRunner::~NemesisRunner() = default;

Duration NemesisRunner::scaled(double low, double high) {
    const double factor = std::uniform_real_distribution<double>(low, high)(random_);
    return Duration(static_cast<Duration::rep>(factor * static_cast<double>(lease_.count())));
}

Duration NemesisRunner::gap() { return scaled(1.0, 3.0); }

bool NemesisRunner::strike() {
    const Nemesis kind = scenario_.faults[std::uniform_int_distribution<std::size_t>(0, scenario_.faults.size() - 1)(random_)];
    const Nanos start = now_ns();
    switch (kind) {
        case Nemesis::none:
            return true;
        case Nemesis::kill_holder:
        case Nemesis::pause_holder:
        case Nemesis::partition_holder:
            return hit_holder(kind);
        case Nemesis::kill_connections:
            server_command(kind, {"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}, start);
            return true;
        case Nemesis::kill_pubsub:
            server_command(kind, {"CLIENT", "KILL", "TYPE", "pubsub"}, start);
            return true;
        case Nemesis::script_flush:
            server_command(kind, {"SCRIPT", "FLUSH"}, start);
            return true;
        case Nemesis::debug_sleep: {
            const Duration sleep = scaled(0.1, 2.0);
            server_command(kind, {"DEBUG", "SLEEP", std::to_string(double(sleep.count()) / 1000.0)}, start);
            return true;
        }
        case Nemesis::pause_server: {
            const Duration pause = scaled(0.1, 2.0);
            server_.pause();
            std::this_thread::sleep_for(pause);
            server_.resume();
            const Nanos end = now_ns();
            log_.write(Fault{start, end, kind, -1, -1, "SIGSTOP for " + ms_text(end - start)});
            return true;
        }
        case Nemesis::sentinel_failover:
        case Nemesis::sentinel_failover_release:
        case Nemesis::sentinel_kill_master:
            return fail_over(kind);
        case Nemesis::sentinel_hang:
            return hang_sentinel();
        case Nemesis::cluster_migrate_slot:
            migrate_slot();
            return true;
        case Nemesis::cluster_failover:
        case Nemesis::cluster_kill_primary:
            return fail_over_primary(kind);
        case Nemesis::cluster_kill_primary_waiting:
            return kill_primary_under_waiters();
        case Nemesis::revoke_rights:
            return revoke_rights();
        case Nemesis::narrow_acl:
            return narrow_acl();
        case Nemesis::pause_replica:
            return pause_replica();
        case Nemesis::restart_persistent:
        case Nemesis::restart_volatile: {
            server_.kill();
            server_.restart();
            const Nanos end = now_ns();
            log_.write(Fault{start, end, kind, -1, -1, "kill -9, back after " + ms_text(end - start)});
            return true;
        }
    }
    return false;
}

// A worker inside its critical section, within one lease.
int NemesisRunner::any_holder() {
    const Nanos give_up = now_ns() + to_ns(lease_);
    while (now_ns() < give_up) {
        std::vector<int> holding;
        for (int s = 0; s < workers_.slots(); ++s)
            if (status_.slots[s].holding.load() >= 0) holding.push_back(s);
        if (!holding.empty()) return holding[std::uniform_int_distribution<std::size_t>(0, holding.size() - 1)(random_)];
        std::this_thread::sleep_for(2ms);
    }
    return -1;
}

// The holder with the most critical section left, waiting a few leases for
// one that stays inside well past a lost lease: a partition that cuts off a
// holder about to leave anyway proves nothing, and one that catches it inside
// is the case the local lease deadline exists for.
int NemesisRunner::holder_staying_inside() {
    const Nanos enough = to_ns(lease_) * 3 / 2;
    const Nanos give_up = now_ns() + 6 * to_ns(lease_);
    int best = -1;
    Nanos best_left = 0;
    while (now_ns() < give_up) {
        best = -1;
        best_left = 0;
        for (int s = 0; s < workers_.slots(); ++s) {
            const Nanos ends = status_.slots[s].section_ends.load();
            if (status_.slots[s].holding.load() < 0 || ends == 0) continue;
            if (const Nanos left = ends - now_ns(); best < 0 || left > best_left) best = s, best_left = left;
        }
        if (best >= 0 && best_left >= enough) return best;
        std::this_thread::sleep_for(1ms);
    }
    return best;
}

bool NemesisRunner::hit_holder(Nemesis kind) {
    const int slot = kind == Nemesis::partition_holder ? holder_staying_inside() : any_holder();
    if (slot < 0) return false;
    const int lock = status_.slots[slot].holding.load();
    if (lock < 0) return false;  // left its critical section just now
    const int worker = workers_.worker_in(slot);
    if (kind == Nemesis::kill_holder) {
        const Nanos at = workers_.kill_and_replace(slot);
        status_.slots[slot].holding.store(-1);
        status_.slots[slot].section_ends.store(0);
        log_.write(Fault{at, at, kind, worker, lock, "SIGKILL"});
        return true;
    }
    if (kind == Nemesis::partition_holder) {
        // Past the lease, so that another worker can take the lock meanwhile.
        const Duration cut = scaled(1.5, 3.0);
        support::TcpProxy& proxy = *proxies_.at(static_cast<std::size_t>(slot));
        proxy.freeze();
        const Nanos start = now_ns();
        std::this_thread::sleep_for(cut);
        proxy.heal();
        const Nanos end = now_ns();
        log_.write(Fault{start, end, kind, worker, lock, "proxy frozen for " + ms_text(end - start)});
        return true;
    }
    const Duration pause = scaled(0.5, 3.0);
    const Nanos start = now_ns();
    ::kill(workers_.pid_in(slot), SIGSTOP);
    std::this_thread::sleep_for(pause);
    ::kill(workers_.pid_in(slot), SIGCONT);
    const Nanos end = now_ns();
    log_.write(Fault{start, end, kind, worker, lock, "SIGSTOP for " + ms_text(end - start)});
    return true;
}

// Waits until a holder's critical section is about to end (within 2 ms: its
// release follows), until `until` or `over()`; returns its slot, or -1.
int NemesisRunner::holder_about_to_release(Nanos until, const std::function<bool()>& over) {
    for (int round = 0; now_ns() < until; ++round) {
        for (int s = 0; s < workers_.slots(); ++s) {
            const Nanos ends = status_.slots[s].section_ends.load();
            if (status_.slots[s].holding.load() < 0 || ends == 0) continue;
            if (const Nanos left = ends - now_ns(); left >= 0 && left < 2'000'000) return s;
        }
        if (round % 50 == 0 && over()) return -1;  // every 10 ms
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return -1;
}

// On a connection of its own, made for this one command: the server may have
// been restarted since the last fault.
void NemesisRunner::server_command(Nemesis kind, const std::vector<std::string>& command, Nanos start) {
    support::SyncRedis admin(server_.port());
    auto reply = admin.command(command);
    const Nanos end = now_ns();
    if (reply->type == REDIS_REPLY_ERROR)
        throw std::runtime_error("nemesis " + nemesis_name(kind) + ": the lock server refused " + command[0] + ": " +
                                 std::string(reply->str, reply->len));
    std::string detail = command[0] + " " + command[1];
    if (reply->type == REDIS_REPLY_INTEGER) detail += ": " + std::to_string(reply->integer) + " closed";
    if (kind == Nemesis::debug_sleep) detail += " " + command[2] + "s";
    log_.write(Fault{start, end, kind, -1, -1, detail});
}

}  // namespace holdfast::check
