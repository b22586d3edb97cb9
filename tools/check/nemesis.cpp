#include "nemesis.hpp"

#include <signal.h>

#include <thread>

#include "holdfast/holdfast.hpp"
#include "sentinel_group.hpp"
#include "sync_redis.hpp"

namespace holdfast::check {
namespace {

using namespace std::chrono_literals;

std::string ms_text(Nanos ns) { return std::to_string(ns / 1'000'000) + "ms"; }

// After a failover named the new master at `named`: waits until the old one is
// back as its replica (so the next failover has one to promote), and says how
// long that took for the fault's log.
std::string old_master_rejoined(std::uint16_t new_master, Nanos named, std::chrono::seconds within) {
    try {
        support::SentinelGroup::wait_for_replicas(new_master, 1, within);
        return ", old master back as its replica after " + ms_text(now_ns() - named);
    } catch (const std::runtime_error&) {
        return "; the old master not back as its replica within " + std::to_string(within.count()) + " s";
    }
}

}  // namespace

NemesisRunner::NemesisRunner(const Scenario& scenario, Primitive primitive, Duration lease, int locks,
                             std::uint64_t seed,
                             support::RedisServer& server, Workers& workers, StatusPage& status, HistoryWriter& log,
                             std::vector<std::unique_ptr<support::TcpProxy>>& proxies,
                             support::SentinelGroup* sentinels, support::RedisCluster* cluster, std::string dir,
                             std::string replica_sync)
    : scenario_(scenario),
      primitive_(primitive),
      lease_(lease),
      locks_(locks),
      random_(seed),
      server_(server),
      workers_(workers),
      status_(status),
      log_(log),
      proxies_(proxies),
      sentinels_(sentinels),
      cluster_(cluster),
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

// A failover during a release (issue 19, item 5): SENTINEL FAILOVER, then,
// once the replica has been promoted and before the sentinels name it (the
// clients still use the old master meanwhile), a holder whose critical section
// ends: its release runs on the deposed master. Asynchronous replication loses
// it; under replica sync its WAIT finds no replica, and it must be reported.
bool NemesisRunner::fail_over_under_release() {
    support::RedisServer& old_master = sentinels_->master();
    support::RedisServer& old_replica = sentinels_->replica();
    const std::uint16_t before = old_master.port();
    try {  // nothing to promote until the last victim is back as a replica
        support::SentinelGroup::wait_for_replicas(before, 1, std::chrono::seconds(2));
    } catch (const std::runtime_error&) {
        return false;
    }
    const Nanos start = now_ns();
    // -NOGOODSLAVE until the sentinel has seen the replica: ask again.
    for (support::SyncRedis sentinel(sentinels_->sentinels[0]->port());;) {
        if (sentinel.command({"SENTINEL", "FAILOVER", sentinels_->master_name()})->type != REDIS_REPLY_ERROR) break;
        if (now_ns() - start > 2'000'000'000) return false;
        std::this_thread::sleep_for(10ms);
    }
    auto is_master = [](std::uint16_t port) {
        try {
            support::SyncRedis node(port);
            const auto role = node.command({"ROLE"});
            return role->type == REDIS_REPLY_ARRAY && role->elements > 0 &&
                   std::string(role->element[0]->str, role->element[0]->len) == "master";
        } catch (const std::runtime_error&) {
            return false;
        }
    };
    while (!is_master(old_replica.port())) {
        if (now_ns() - start > 30'000'000'000) throw std::runtime_error("SENTINEL FAILOVER promoted nothing in 30 s");
        std::this_thread::sleep_for(1ms);
    }
    const Nanos promoted = now_ns();
    // Before the clients leave the old master: until the sentinels name the new one (or it is a replica again).
    const int slot = holder_about_to_release(promoted + 3'000'000'000, [&] {
        return sentinels_->master_port() != before || !is_master(before);
    });
    const Nanos struck = now_ns();
    const int worker = slot < 0 ? -1 : workers_.worker_in(slot);
    const int lock = slot < 0 ? -1 : status_.slots[slot].holding.load();
    const std::uint16_t after = sentinels_->wait_for_new_master(before);
    const Nanos named = now_ns();
    const std::string rejoined = old_master_rejoined(after, named, std::chrono::seconds(10));
    const Nanos end = now_ns();
    const std::string what =
        "SENTINEL FAILOVER: replica promoted after " + ms_text(promoted - start) + ", " +
        (slot < 0 ? "no holder left its section before the sentinels named it"
                  : "worker " + std::to_string(worker) + " leaving its section of " + lock_name(lock) + " " +
                        ms_text(struck - promoted) + " after that") +
        ": master :" + std::to_string(before) + " -> :" + std::to_string(after) + " named in " +
        ms_text(named - start) + rejoined;
    log_.write(Fault{start, end, Nemesis::sentinel_failover_release, worker, lock, what});
    if (named - start > 3'000'000'000 || rejoined.find("within") != std::string::npos) unusual_.push_back(what);
    return true;
}

// The fault lasts until the sentinels name the new master and it has its
// replica again (the old master, turned around), so the next one has a
// replica to promote.
bool NemesisRunner::fail_over(Nemesis kind) {
    if (!sentinels_) throw std::logic_error("nemesis " + nemesis_name(kind) + " without a Sentinel deployment");
    if (kind == Nemesis::sentinel_failover_release) return fail_over_under_release();
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
    if (kind == Nemesis::sentinel_failover) {
        after = sentinels_->failover();
        how = "SENTINEL FAILOVER";
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
    const std::string rejoined = old_master_rejoined(after, named, std::chrono::seconds(10));
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
    std::string rejoined;
    try {
        after = sentinels_->failover(std::chrono::seconds(30), 1);
        named = now_ns();
        rejoined = old_master_rejoined(after, named, std::chrono::seconds(20));
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

// Workers whose acquire call of `lock` began before `since_before`, still under way.
int NemesisRunner::waiters_on(int lock, Nanos since_before) {
    int n = 0;
    for (int s = 0; s < workers_.slots(); ++s)
        n += status_.slots[s].waiting.load() == lock && status_.slots[s].waiting_since.load() < since_before;
    return n;
}

// One line of the nemesis's own history, as a worker writes it.
void NemesisRunner::log_own(Op op, Phase phase, int lock, std::int64_t value, std::string message) {
    own_log_->write(Event{now_ns(), nemesis_worker, op, phase, lock, own_holds_, Access::exclusive, own_token_, value,
                          std::move(message)});
}

// Workers asleep waiting for a lock, their subscriptions on its slot's
// primary, when that primary is killed (issue 19, item 3). The nemesis holds
// the lock itself, through a client of its own, for longer than the outage;
// once the replica is promoted it releases the lock, the old primary still
// down: the workers still waiting must hear it on the promoted node (their
// subscriptions cannot reconnect to the old one), and the checker wants them
// granted within 3 s of that release. The old primary is restarted once a
// worker holds the lock, or after 5 s, and rejoins as a replica; at once if
// the release did not return ok (under replica sync `required`, a promoted
// node seen with a replica before refuses to confirm anything until it has
// one again, so nobody can be granted the lock before). The nemesis's hold,
// like a worker's, is in the histories (worker-nemesis.log).
bool NemesisRunner::kill_primary_under_waiters() {
    if (!cluster_) throw std::logic_error("nemesis cluster-kill-primary-waiting without a cluster");
    try {  // nothing to promote until the last victim is back as a replica
        cluster_->wait_for_replicas(std::chrono::seconds(2));
    } catch (const std::runtime_error&) {
        return false;
    }
    const Nanos paced = last_failover_ + 2'200'000 * Nanos(failover_node_timeout_ms);
    if (now_ns() < paced) std::this_thread::sleep_for(std::chrono::nanoseconds(paced - now_ns()));
    if (!client_) {
        Config config = Config::from_uri(cluster_->url());
        config.replica_sync = replica_sync_ == "off"    ? ReplicaSync::off
                              : replica_sync_ == "wait" ? ReplicaSync::wait
                                                        : ReplicaSync::required;
        config.timeout = std::chrono::seconds(5);  // its release goes to a node promoted just now
        client_ = std::make_unique<Client>(config);
        own_log_ = std::make_unique<HistoryWriter>(dir_ + "/worker-nemesis.log");
    }
    const int lock = std::uniform_int_distribution<int>(0, std::max(0, locks_ - 1))(random_);
    const std::size_t slot = cluster_->slot_of(lock_name(lock));
    const std::size_t primary = cluster_->owner_of(slot);
    const std::size_t replica = cluster_->replica_of(primary);
    // Held past the kill, the promotion and the rejoin (seconds), then released.
    const Duration held_for = lease_ * 60;
    // Taken as the workers take it, so that they wait as they always do (on
    // their channel, in their queue) and its token is in their order. A
    // semaphore has no one holder to wait behind: no fault.
    if (primitive_ == Primitive::semaphore) return false;
    std::unique_ptr<Lock> one;
    std::unique_ptr<ReadWriteLock> read_write;
    switch (primitive_) {
        case Primitive::fenced: one = std::make_unique<FencedLock>(*client_, lock_name(lock)); break;
        case Primitive::fair: one = std::make_unique<FairLock>(*client_, lock_name(lock), fair_wait_budget); break;
        case Primitive::rwlock: read_write = std::make_unique<ReadWriteLock>(*client_, lock_name(lock)); break;
        default: one = std::make_unique<Lock>(*client_, lock_name(lock)); break;
    }
    Lock& held = read_write ? read_write->write_lock() : *one;
    ++own_holds_;
    own_token_ = -1;
    log_own(Op::acquire, Phase::invoke, lock, now_ns() + to_ns(held_for), client_->current_owner());
    try {
        const Duration wait = lease_ * 4;  // a worker's section is at most 2 leases
        bool taken = false;
        if (primitive_ == Primitive::fenced) {
            const auto token = static_cast<FencedLock&>(held).try_lock_and_get_token(wait, held_for);
            taken = token.has_value();
            if (token) own_token_ = *token;
        } else {
            taken = held.try_lock_for(wait, held_for);
        }
        if (!taken) {
            log_own(Op::acquire, Phase::fail, lock, -1, "timed out");
            return false;
        }
    } catch (const ConnectionError& e) {
        log_own(Op::acquire, Phase::unknown, lock, -1, e.what());
        return false;
    } catch (const std::exception& e) {
        log_own(Op::acquire, Phase::fail, lock, -1, e.what());
        return false;
    }
    log_own(Op::acquire, Phase::ok, lock);
    // Until a worker has been waiting for a fifth of a lease (asleep on its
    // subscription by then), and a lease more for others to join it.
    const Nanos give_up = now_ns() + 6 * to_ns(lease_);
    while (waiters_on(lock, now_ns() - to_ns(lease_) / 5) == 0 && now_ns() < give_up)
        std::this_thread::sleep_for(1ms);
    if (now_ns() < give_up) std::this_thread::sleep_for(lease_);
    const int asleep = waiters_on(lock, now_ns() - to_ns(lease_) / 5);
    const Nanos start = now_ns();
    Nanos promoted = start;
    if (asleep > 0) {
        cluster_->node(primary).kill();
        cluster_->wait_for_owner(slot, replica, std::chrono::seconds(60));
        promoted = now_ns();
    }
    const int still = waiters_on(lock, start);
    log_own(Op::release, Phase::invoke, lock);
    bool released_ok = false;
    try {
        held.release();
        released_ok = true;
        std::int64_t left = -1;
        std::string probe_error;
        try {
            left = held.hold_count();
        } catch (const std::exception& e) {
            probe_error = std::string("hold count probe failed: ") + e.what();
        }
        log_own(Op::release, Phase::ok, lock, left, probe_error);
    } catch (const ConnectionError& e) {
        log_own(Op::release, Phase::unknown, lock, -1, e.what());
    } catch (const std::exception& e) {
        log_own(Op::release, Phase::fail, lock, -1, e.what());
    }
    if (asleep == 0) return false;  // nobody waited: an ordinary hold, no fault
    const Nanos released = now_ns();
    auto taken = [&] {
        for (int s = 0; s < workers_.slots(); ++s)
            if (status_.slots[s].holding.load() == lock) return true;
        return false;
    };
    while (released_ok && !taken() && now_ns() - released < 5'000'000'000) std::this_thread::sleep_for(1ms);
    const std::string woken = !released_ok ? "the release not confirmed"
                              : taken()    ? "a worker held it " + ms_text(now_ns() - released) + " later"
                                           : "no worker held it within 5 s";
    cluster_->node(primary).restart();
    std::string rejoined = ", replicas back after ";
    try {
        cluster_->wait_for_replicas(std::chrono::seconds(10));
        rejoined += ms_text(now_ns() - start);
    } catch (const std::runtime_error&) {
        rejoined = "; the old primary not yet back as its replica";
    }
    const Nanos end = now_ns();
    last_failover_ = end;
    log_.write(Fault{start, end, Nemesis::cluster_kill_primary_waiting, nemesis_worker, lock,
                     "kill -9 of the primary while " + std::to_string(asleep) + " worker(s) slept waiting for " +
                         lock_name(lock) + " (held by the nemesis): slot " + std::to_string(slot) + ", primary :" +
                         std::to_string(cluster_->port(primary)) + " -> :" + std::to_string(cluster_->port(replica)) +
                         " in " + ms_text(promoted - start) + "; released then, the old primary still down, " +
                         std::to_string(still) + " of those waiting since the kill still waiting; " + woken +
                         "; restarted" + rejoined});
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
