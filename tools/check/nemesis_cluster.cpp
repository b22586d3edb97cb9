// The Redis Cluster nemeses: slot migrations, failovers of a lock's primary,
// and a primary killed under waiters while the nemesis holds their lock.
#include "nemesis.hpp"

#include <functional>
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
    if (!cluster_ready()) return false;
    if (!client_) {
        Config config = Config::from_uri(cluster_->url());
        config.replica_sync = replica_sync_named(replica_sync_);
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
    if (is_semaphore(primitive_)) return false;
    std::unique_ptr<Lock> one;
    std::unique_ptr<ReadWriteLock> read_write;
    std::unique_ptr<MultiValueLock> group;  // every value of the group: whatever a worker asks for waits
    switch (primitive_) {
        case Primitive::fenced: one = std::make_unique<FencedLock>(*client_, lock_name(lock)); break;
        case Primitive::fair: one = std::make_unique<FairLock>(*client_, lock_name(lock), fair_wait_budget); break;
        case Primitive::nonreentrant_fair:
            one = std::make_unique<NonReentrantFairLock>(*client_, lock_name(lock), fair_wait_budget);
            break;
        case Primitive::nonreentrant: one = std::make_unique<NonReentrantLock>(*client_, lock_name(lock)); break;
        case Primitive::rwlock: read_write = std::make_unique<ReadWriteLock>(*client_, lock_name(lock)); break;
        case Primitive::group:
            group = std::make_unique<MultiValueLock>(*client_, lock_name(lock), std::vector<std::string>{"a", "b", "c"});
            static_assert(std::string_view(group_values) == "abc");
            break;
        default: one = std::make_unique<Lock>(*client_, lock_name(lock)); break;
    }
    // What the nemesis does with its hold, whichever object holds it.
    Lock* const lock_held = group ? nullptr : read_write ? &read_write->write_lock() : one.get();
    struct {
        std::function<bool(Duration, Duration)> try_lock_for;
        std::function<void()> release;
        std::function<std::int64_t()> hold_count;
    } held;
    if (group) {
        held = {[&](Duration wait, Duration lease) { return group->try_lock_for(wait, lease); },
                [&] { group->release(); }, [&] { return group->hold_count(); }};
    } else {
        held = {[=](Duration wait, Duration lease) { return lock_held->try_lock_for(wait, lease); },
                [=] { lock_held->release(); }, [=] { return lock_held->hold_count(); }};
    }
    ++own_holds_;
    own_token_ = -1;
    log_own(Op::acquire, Phase::invoke, lock, now_ns() + to_ns(held_for),
            client_->current_owner() + (group ? std::string(values_note) + group_values : ""));
    try {
        const Duration wait = lease_ * 4;  // a worker's section is at most 2 leases
        bool taken = false;
        if (primitive_ == Primitive::fenced) {
            const auto token = static_cast<FencedLock&>(*lock_held).try_lock_and_get_token(wait, held_for);
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

}  // namespace holdfast::check
