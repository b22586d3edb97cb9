// The Redis Cluster nemeses: slot migrations, failovers of a lock's primary,
// and a primary killed under waiters while the nemesis holds their lock.
#include "nemesis.hpp"

#include <functional>
#include <optional>
#include <thread>

#include "holdfast/holdfast.hpp"
#include "targets.hpp"

namespace holdfast::check {

using namespace std::chrono_literals;

// Whether a primary can fail over now: every master has its replica back
// (nothing to promote until the last victim is back); then waits out the
// pace at which the masters vote for a replica of one master, once per 2 x
// node timeout (sooner, the failover would wait for Redis, not for the client).
bool NemesisRunner::cluster_ready() {
    try {
        cluster_->wait_for_replicas(std::chrono::seconds(2));
    } catch (const std::runtime_error&) {
        return false;
    }
    const Nanos paced = last_failover_ + 2'200'000 * Nanos(failover_node_timeout_ms);
    if (now_ns() < paced) std::this_thread::sleep_for(std::chrono::nanoseconds(paced - now_ns()));
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
    if (!cluster_ready()) return false;
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

// The nemesis's own hold of a lock the workers want, taken as they take it,
// so that they wait as they always do (on their channel, in their queue) and
// its token is in their order. A group lock's holds every value: whatever a
// worker asks for waits.
class OwnHold {
public:
    OwnHold(Client& client, Primitive primitive, const std::string& name) {
        switch (primitive) {
            case Primitive::fenced: one_ = std::make_unique<FencedLock>(client, name); break;
            case Primitive::fair: one_ = std::make_unique<FairLock>(client, name, fair_wait_budget); break;
            case Primitive::nonreentrant_fair:
                one_ = std::make_unique<NonReentrantFairLock>(client, name, fair_wait_budget);
                break;
            case Primitive::nonreentrant: one_ = std::make_unique<NonReentrantLock>(client, name); break;
            case Primitive::rwlock: read_write_ = std::make_unique<ReadWriteLock>(client, name); break;
            case Primitive::group:
                group_ = std::make_unique<MultiValueLock>(client, name, std::vector<std::string>{"a", "b", "c"});
                static_assert(std::string_view(group_values) == "abc");
                break;
            default: one_ = std::make_unique<Lock>(client, name); break;
        }
        fenced_ = primitive == Primitive::fenced;
    }

    /// The fencing token (-1 for a primitive without one), or nullopt if `wait` ran out.
    std::optional<std::int64_t> try_take(Duration wait, Duration lease) {
        if (group_) return group_->try_lock_for(wait, lease) ? std::optional<std::int64_t>(-1) : std::nullopt;
        if (fenced_) return static_cast<FencedLock&>(lock()).try_lock_and_get_token(wait, lease);
        return lock().try_lock_for(wait, lease) ? std::optional<std::int64_t>(-1) : std::nullopt;
    }
    void release() { group_ ? group_->release() : lock().release(); }
    std::int64_t hold_count() { return group_ ? group_->hold_count() : lock().hold_count(); }

private:
    Lock& lock() { return read_write_ ? read_write_->write_lock() : *one_; }

    std::unique_ptr<Lock> one_;
    std::unique_ptr<ReadWriteLock> read_write_;
    std::unique_ptr<MultiValueLock> group_;
    bool fenced_ = false;
};

// The nemesis's client and history, made on first use.
void NemesisRunner::own_client() {
    if (client_) return;
    Config config = Config::from_uri(cluster_->url());
    config.replica_sync = replica_sync_named(replica_sync_);
    config.timeout = std::chrono::seconds(5);  // its release goes to a node promoted just now
    client_ = std::make_unique<Client>(config);
    own_log_ = std::make_unique<HistoryWriter>(dir_ + "/worker-nemesis.log");
}

// One call on the nemesis's own hold: whether it returned. If it threw, its
// end is recorded as a worker's would be: unknown after a lost connection,
// else failed.
bool NemesisRunner::own_call(Op op, int lock, const std::function<void()>& call) {
    try {
        call();
        return true;
    } catch (const ConnectionError& e) {
        log_own(op, Phase::unknown, lock, -1, e.what());
    } catch (const std::exception& e) {
        log_own(op, Phase::fail, lock, -1, e.what());
    }
    return false;
}

// Takes `hold` of `lock` for `held_for`, as the histories record a worker's
// acquire: whether it was taken.
bool NemesisRunner::take_own(OwnHold& hold, int lock, Duration held_for) {
    ++own_holds_;
    own_token_ = -1;
    log_own(Op::acquire, Phase::invoke, lock, now_ns() + to_ns(held_for),
            client_->current_owner() + (primitive_ == Primitive::group ? std::string(values_note) + group_values : ""));
    std::optional<std::int64_t> token;
    // A worker's section is at most 2 leases.
    if (!own_call(Op::acquire, lock, [&] { token = hold.try_take(lease_ * 4, held_for); })) return false;
    if (!token) {
        log_own(Op::acquire, Phase::fail, lock, -1, "timed out");
        return false;
    }
    own_token_ = *token;
    log_own(Op::acquire, Phase::ok, lock);
    return true;
}

// Releases it, as a worker's release is recorded: whether it returned ok.
bool NemesisRunner::release_own(OwnHold& hold, int lock) {
    log_own(Op::release, Phase::invoke, lock);
    if (!own_call(Op::release, lock, [&] { hold.release(); })) return false;
    std::int64_t left = -1;
    std::string probe_error;
    try {
        left = hold.hold_count();
    } catch (const std::exception& e) {
        probe_error = std::string("hold count probe failed: ") + e.what();
    }
    log_own(Op::release, Phase::ok, lock, left, probe_error);
    return true;
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
    // A semaphore has no one holder to wait behind: no fault.
    if (is_semaphore(primitive_) || !cluster_ready()) return false;
    own_client();
    const int lock = std::uniform_int_distribution<int>(0, std::max(0, locks_ - 1))(random_);
    const std::size_t slot = cluster_->slot_of(lock_name(lock));
    const std::size_t primary = cluster_->owner_of(slot);
    const std::size_t replica = cluster_->replica_of(primary);
    OwnHold hold(*client_, primitive_, lock_name(lock));
    // Held past the kill, the promotion and the rejoin (seconds), then released.
    if (!take_own(hold, lock, lease_ * 60)) return false;
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
    const bool released_ok = release_own(hold, lock);
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

}  // namespace holdfast::check
