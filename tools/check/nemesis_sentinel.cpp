// The Sentinel nemeses: failovers (SENTINEL FAILOVER, a killed master, one
// struck under a release) and a hung sentinel.
#include "nemesis.hpp"

#include <thread>

#include "sentinel_group.hpp"
#include "sync_redis.hpp"

namespace holdfast::check {
namespace {

using namespace std::chrono_literals;

// After a failover named the new master at `named`: waits until the old one is
// back as its replica (so the next failover has one to promote), and says how
// long that took for the fault's log.
std::string old_master_rejoined(std::uint16_t new_master, Nanos named, std::chrono::seconds within) {
    if (replica_in_sync(new_master, within)) return ", old master back as its replica after " + ms_text(now_ns() - named);
    return "; the old master not back as its replica within " + std::to_string(within.count()) + " s";
}

// A sentinel resumed after a SIGSTOP (sentinel-hang) sees its clock jump and
// goes into TILT mode for 30 s, refusing every failover meanwhile: the first
// sentinel not in TILT (INFO sentinel: sentinel_tilt:0), to fail over through.
std::size_t untilted(const support::SentinelGroup& group) {
    for (std::size_t i = 0; i < group.sentinels.size(); ++i) {
        try {
            if (support::SyncRedis(group.sentinels[i]->port()).string({"INFO", "sentinel"}).find("sentinel_tilt:0") !=
                std::string::npos)
                return i;
        } catch (const std::exception&) {
        }
    }
    return 0;
}

}  // namespace

// A failover during a release (issue 19, item 5): SENTINEL FAILOVER, then,
// once the replica has been promoted and before the sentinels name it (the
// clients still use the old master meanwhile), a holder whose critical section
// ends: its release runs on the deposed master. Asynchronous replication loses
// it; under replica sync its WAIT finds no replica, and it must be reported.
bool NemesisRunner::fail_over_under_release() {
    support::RedisServer& old_master = sentinels_->master();
    support::RedisServer& old_replica = sentinels_->replica();
    const std::uint16_t before = old_master.port();
    if (!replica_in_sync(before)) return false;  // nothing to promote until the last victim is back
    const Nanos start = now_ns();
    // -NOGOODSLAVE until the sentinel has seen the replica: ask again.
    for (support::SyncRedis sentinel(sentinels_->sentinels[untilted(*sentinels_)]->port());;) {
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
    if (!replica_in_sync(before)) return false;  // nothing to promote until the last victim is back
    const Nanos start = now_ns();
    std::uint16_t after;
    std::string how;
    if (kind == Nemesis::sentinel_failover) {
        after = sentinels_->failover(std::chrono::seconds(30), untilted(*sentinels_));
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
    if (!replica_in_sync(before)) return false;  // nothing to promote until the last victim is back
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

}  // namespace holdfast::check
