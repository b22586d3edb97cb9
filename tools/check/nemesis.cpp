#include "nemesis.hpp"

#include <signal.h>

#include <thread>

#include "sentinel_group.hpp"
#include "sync_redis.hpp"

namespace holdfast::check {
namespace {

using namespace std::chrono_literals;

std::string ms_text(Nanos ns) { return std::to_string(ns / 1'000'000) + "ms"; }

}  // namespace

NemesisRunner::NemesisRunner(const Scenario& scenario, Duration lease, int locks, std::uint64_t seed,
                             support::RedisServer& server, Workers& workers, StatusPage& status, HistoryWriter& log,
                             std::vector<std::unique_ptr<support::TcpProxy>>& proxies,
                             support::SentinelGroup* sentinels, support::RedisCluster* cluster)
    : scenario_(scenario),
      lease_(lease),
      locks_(locks),
      random_(seed),
      server_(server),
      workers_(workers),
      status_(status),
      log_(log),
      proxies_(proxies),
      sentinels_(sentinels),
      cluster_(cluster) {}

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
        case Nemesis::revoke_rights:
            return revoke_rights();
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

// A holder's channels taken away (its ACL user's, one per worker slot) while
// it is inside: its release is refused, so its hold must not be renewed and
// its lease must free the lock; its next acquires are refused up front, and
// its subscriptions dropped. Given back after 0.5-2 leases.
bool NemesisRunner::revoke_rights() {
    const int slot = any_holder();
    if (slot < 0) return false;
    const int lock = status_.slots[slot].holding.load();
    if (lock < 0) return false;
    const int worker = workers_.worker_in(slot);
    const std::string user = acl_user_of(slot);
    support::SyncRedis admin(server_.port());
    const Nanos start = now_ns();
    admin.command({"ACL", "SETUSER", user, "resetchannels"});
    std::this_thread::sleep_for(scaled(0.5, 2.0));
    admin.command({"ACL", "SETUSER", user, "allchannels"});
    const Nanos end = now_ns();
    log_.write(Fault{start, end, Nemesis::revoke_rights, worker, lock,
                     "ACL SETUSER " + user + " resetchannels for " + ms_text(end - start)});
    return true;
}

// Waits (a few leases at most) until a holder's critical section is about to
// end: its release is then sent while the failover runs.
bool NemesisRunner::holder_about_to_release() {
    const Nanos give_up = now_ns() + 4 * to_ns(lease_);
    while (now_ns() < give_up) {
        for (int s = 0; s < workers_.slots(); ++s) {
            const Nanos ends = status_.slots[s].section_ends.load();
            if (status_.slots[s].holding.load() < 0 || ends == 0) continue;
            if (const Nanos left = ends - now_ns(); left >= 0 && left < 2'000'000) return true;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return false;
}

// The fault lasts until the sentinels name the new master and it has its
// replica again (the old master, turned around), so the next one has a
// replica to promote.
bool NemesisRunner::fail_over(Nemesis kind) {
    if (!sentinels_) throw std::logic_error("nemesis " + nemesis_name(kind) + " without a Sentinel deployment");
    // Timed to a release: struck as a holder's critical section ends.
    if (kind == Nemesis::sentinel_failover_release && !holder_about_to_release()) return false;
    support::RedisServer& old_master = sentinels_->master();
    const std::uint16_t before = old_master.port();
    try {  // nothing to promote until the last victim is back as a replica
        support::SentinelGroup::wait_for_replicas(before, 1, std::chrono::seconds(2));
    } catch (const std::runtime_error&) {
        return false;
    }
    const Nanos start = now_ns();
    std::uint16_t after;
    std::string how;
    if (kind == Nemesis::sentinel_failover || kind == Nemesis::sentinel_failover_release) {
        after = sentinels_->failover();
        how = kind == Nemesis::sentinel_failover ? "SENTINEL FAILOVER" : "SENTINEL FAILOVER as a holder releases";
    } else {
        old_master.kill();
        after = sentinels_->wait_for_new_master(before);
        // Same port and config file (which the sentinels rewrite): it comes
        // back an empty master, and the sentinels turn it into a replica once
        // they have seen it up for 4 hello periods (SentinelGroup: 1 s).
        old_master.restart();
        how = "kill -9 of the master, restarted";
    }
    const Nanos named = now_ns();
    std::string rejoined = ", old master back as its replica after ";
    try {
        support::SentinelGroup::wait_for_replicas(after, 1, std::chrono::seconds(10));
        rejoined += ms_text(now_ns() - named);
    } catch (const std::runtime_error&) {
        rejoined = "; the old master not back as its replica within 10 s";
    }
    const Nanos end = now_ns();
    const std::string what = how + ": master :" + std::to_string(before) + " -> :" + std::to_string(after) +
                             " named in " + ms_text(named - start) + rejoined;
    log_.write(Fault{start, end, kind, -1, -1, what});
    // Usually named within about 2 s (RELIABILITY.md): a slower one is worth the sentinels' logs.
    if (named - start > 3'000'000'000 || rejoined.find("within") != std::string::npos) unusual_.push_back(what);
    return true;
}

// The sentinel the workers' URI names first (the one a client asks first,
// and listens to if it listens to one) is hung by SIGSTOP, and the second one
// fails the master over, while the two still running go at Sentinel's default
// pace: the deposed master stays a master for 8 s, as in production, before
// they turn it into a replica. The hung one is resumed once the old master is
// back as a replica, and the fault lasts until it names the new master too.
bool NemesisRunner::hang_sentinel() {
    if (!sentinels_) throw std::logic_error("nemesis sentinel-hang without a Sentinel deployment");
    const std::uint16_t before = sentinels_->master_port();
    try {  // nothing to promote until the last victim is back as a replica
        support::SentinelGroup::wait_for_replicas(before, 1, std::chrono::seconds(2));
    } catch (const std::runtime_error&) {
        return false;
    }
    support::RedisServer& hung = *sentinels_->sentinels.front();
    const Nanos start = now_ns();
    sentinels_->production_pace(true, 1);
    hung.pause();
    std::uint16_t after = 0;
    Nanos named = 0, resumed = 0;
    std::string rejoined = ", old master back as its replica after ";
    try {
        after = sentinels_->failover(std::chrono::seconds(30), 1);
        named = now_ns();
        try {
            support::SentinelGroup::wait_for_replicas(after, 1, std::chrono::seconds(20));
            rejoined += ms_text(now_ns() - named);
        } catch (const std::runtime_error&) {
            rejoined = "; the old master not back as its replica within 20 s";
        }
    } catch (...) {
        hung.resume();
        throw;
    }
    hung.resume();
    resumed = now_ns();
    sentinels_->production_pace(false, 1);
    sentinels_->wait_for_new_master(before);
    const Nanos end = now_ns();
    const std::string what = "SIGSTOP of sentinel :" + std::to_string(hung.port()) + ", SENTINEL FAILOVER through :" +
                             std::to_string(sentinels_->sentinels[1]->port()) + ": master :" + std::to_string(before) +
                             " -> :" + std::to_string(after) + " named in " + ms_text(named - start) + rejoined +
                             ", SIGCONT after " + ms_text(resumed - start) + ", caught up in " + ms_text(end - resumed);
    log_.write(Fault{start, end, Nemesis::sentinel_hang, -1, -1, what});
    if (named - start > 3'000'000'000 || rejoined.find("within") != std::string::npos) unusual_.push_back(what);
    return true;
}

// A lock's slot (its hash tag's: every key of the lock moves with it) to the
// next master, keys and all, as redis-cli --cluster reshard does, but slowly:
// MIGRATING for half a lease to a lease and a half (acquires and releases
// meet ASK), then the keys one at a time (a multi-key script meets them split:
// TRYAGAIN), then the new owner (MOVED). Releases land inside the migration.
void NemesisRunner::migrate_slot() {
    if (!cluster_) throw std::logic_error("nemesis cluster-migrate-slot without a cluster");
    const int lock = std::uniform_int_distribution<int>(0, std::max(0, locks_ - 1))(random_);
    const std::size_t slot = cluster_->slot_of(lock_name(lock));
    const std::size_t from = cluster_->owner_of(slot);
    const std::size_t to = (from + 1) % cluster_->size();
    const Nanos start = now_ns();
    cluster_->start_move(slot, to);
    std::this_thread::sleep_for(scaled(0.5, 1.5));
    cluster_->finish_move(slot, to, std::chrono::milliseconds(lease_.count() / 20 + 1));
    const Nanos end = now_ns();
    log_.write(Fault{start, end, Nemesis::cluster_migrate_slot, -1, lock,
                     "slot " + std::to_string(slot) + " of " + lock_name(lock) + " moved from :" +
                         std::to_string(cluster_->port(from)) + " to :" + std::to_string(cluster_->port(to)) +
                         " in " + ms_text(end - start)});
}

// The primary of a random lock's slot fails over to its replica, by CLUSTER
// FAILOVER or by kill -9 (then restarted: it rejoins as the new primary's
// replica). As fail_over(), the fault lasts until the replica is back, so
// that the next one has a replica to promote.
bool NemesisRunner::fail_over_primary(Nemesis kind) {
    if (!cluster_) throw std::logic_error("nemesis " + nemesis_name(kind) + " without a cluster");
    try {  // nothing to promote until the last victim is back as a replica
        cluster_->wait_for_replicas(std::chrono::seconds(2));
    } catch (const std::runtime_error&) {
        return false;
    }
    // The masters vote for a replica of one master once per 2 x node timeout:
    // sooner, the failover would wait for Redis, not for the client.
    const Nanos paced = last_failover_ + 2'200'000 * Nanos(failover_node_timeout_ms);
    if (now_ns() < paced) std::this_thread::sleep_for(std::chrono::nanoseconds(paced - now_ns()));
    const int lock = std::uniform_int_distribution<int>(0, std::max(0, locks_ - 1))(random_);
    const std::size_t slot = cluster_->slot_of(lock_name(lock));
    const std::size_t primary = cluster_->owner_of(slot);
    const std::size_t replica = cluster_->replica_of(primary);
    const Nanos start = now_ns();
    std::string how;
    if (kind == Nemesis::cluster_failover) {
        cluster_->failover(replica);
        how = "CLUSTER FAILOVER";
    } else {
        cluster_->node(primary).kill();
        cluster_->wait_for_owner(slot, replica, std::chrono::seconds(60));
        cluster_->node(primary).restart();
        how = "kill -9 of the primary, restarted";
    }
    const Nanos promoted = now_ns();
    std::string rejoined;
    try {
        cluster_->wait_for_replicas(std::chrono::seconds(10));
    } catch (const std::runtime_error&) {
        rejoined = "; the old primary not yet back as its replica";
    }
    const Nanos end = now_ns();
    last_failover_ = end;
    log_.write(Fault{start, end, kind, -1, lock,
                     how + ": slot " + std::to_string(slot) + " of " + lock_name(lock) + ", primary :" +
                         std::to_string(cluster_->port(primary)) + " -> :" + std::to_string(cluster_->port(replica)) +
                         " in " + ms_text(promoted - start) + ", replicas back after " + ms_text(end - start) +
                         rejoined});
    return true;
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
