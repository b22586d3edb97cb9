#include "targets.hpp"

#include <future>
#include <random>

#include "holdfast/holdfast.hpp"
#include "primitive/names.hpp"
#include "sync_redis.hpp"

namespace holdfast::check {
namespace {

using namespace std::chrono_literals;

// Any Lock, through the side that `access` names.
class LockTarget : public Target {
public:
    std::optional<std::int64_t> try_acquire(Duration wait, Access access) override {
        return side(access).try_lock_for(wait) ? std::optional<std::int64_t>(-1) : std::nullopt;
    }
    // Checked: the history records a release that failed.
    void release(Access access) override { side(access).release(); }
    std::int64_t holds_left(Access access) override { return side(access).hold_count(); }
    std::stop_token lost_token(Access access) override { return side(access).lease_lost_token(); }
    // Tracked by the watchdog: only then has the token a stop state.
    bool renewed(Access access) override { return side(access).lease_lost_token().stop_possible(); }

protected:
    virtual Lock& side(Access access) = 0;
};

// A Lock with one side: Lock itself, FairLock, FencedLock.
template <class L>
class OneSided : public LockTarget {
public:
    template <class... Args>
    explicit OneSided(Args&&... args) : lock_(std::forward<Args>(args)...) {}

protected:
    Lock& side(Access) override { return lock_; }
    L lock_;
};

class Fenced : public OneSided<FencedLock> {
public:
    using OneSided::OneSided;
    std::optional<std::int64_t> try_acquire(Duration wait, Access) override {
        return lock_.try_lock_and_get_token(wait);
    }
};

// A FairLock whose waiter watches the queue while its acquire call waits, on
// a connection of its own (opened on first need, dropped on any error), and
// reports the first time it sees itself there: the FIFO check's proof that it
// had joined the queue by then. `L`: FairLock or NonReentrantFairLock.
template <class L>
class Fair : public OneSided<L> {
public:
    Fair(Client& client, std::string name, std::uint16_t port, std::function<void()> on_queued)
        : OneSided<L>(client, name, fair_wait_budget),
          client_(client),
          queue_(detail::fair_queue_key(this->lock_.name())),  // the key, under any Config::key_prefix
          port_(port),
          on_queued_(std::move(on_queued)) {}

    std::optional<std::int64_t> try_acquire(Duration wait, Access) override {
        const std::string owner = client_.current_owner();  // as unlock() and hold_count() use
        auto taken = this->lock_.async_try_lock(owner, wait);
        bool seen = false;
        while (!seen && taken.wait_for(2ms) != std::future_status::ready)
            if (in_queue(owner)) {
                seen = true;
                on_queued_();
            }
        return taken.get() ? std::optional<std::int64_t>(-1) : std::nullopt;
    }

private:
    bool in_queue(const std::string& owner) {
        try {
            if (!probe_) probe_ = std::make_unique<support::SyncRedis>(port_);
            return probe_->command({"LPOS", queue_, owner})->type == REDIS_REPLY_INTEGER;
        } catch (const std::exception&) {  // a fault: no evidence this time
            probe_.reset();
            return false;
        }
    }

    Client& client_;
    std::string queue_;
    std::uint16_t port_;
    std::function<void()> on_queued_;
    std::unique_ptr<support::SyncRedis> probe_;
};

// A group lock over the lock's name as group: each hold takes 2 or 3 of the
// values {a, b, c}, drawn by next_values(), so that any two holds share a
// value (and exclude each other, as the lock's counter needs) while the sets
// they wait for differ. One MultiValueLock object per hold: its set is its own.
class Group : public Target {
public:
    Group(Client& client, std::string name, std::uint64_t seed)
        : client_(client), name_(std::move(name)), random_(seed ^ std::hash<std::string>()(name_)) {}

    std::string next_values() override {
        const std::string all = group_values;
        values_ = all;
        if (std::uniform_int_distribution<int>(0, 1)(random_))
            values_.erase(std::uniform_int_distribution<std::size_t>(0, all.size() - 1)(random_), 1);
        return values_;
    }
    std::optional<std::int64_t> try_acquire(Duration wait, Access) override {
        std::vector<std::string> values;
        for (char value : values_) values.emplace_back(1, value);
        lock_.emplace(client_, name_, values);
        return lock_->try_lock_for(wait) ? std::optional<std::int64_t>(-1) : std::nullopt;
    }
    void release(Access) override { lock_->release(); }
    std::int64_t holds_left(Access) override { return lock_->hold_count(); }
    std::stop_token lost_token(Access) override { return lock_->lease_lost_token(); }
    bool renewed(Access) override { return lock_->lease_lost_token().stop_possible(); }

private:
    Client& client_;
    std::string name_;
    std::mt19937_64 random_;
    std::string values_;                   // of the next or current hold, one letter a value
    std::optional<MultiValueLock> lock_;  // of the current hold
};

class ReadWrite : public LockTarget {
public:
    ReadWrite(Client& client, std::string name) : lock_(client, std::move(name)) {}

protected:
    Lock& side(Access access) override { return access == Access::shared ? lock_.read_lock() : lock_.write_lock(); }

private:
    ReadWriteLock lock_;
};

// One permit of a semaphore. The count is set before each acquire if absent,
// as an application that creates its semaphore on first use does: it also
// brings the semaphore back after a restart that lost it.
class SemaphoreTarget : public Target {
public:
    SemaphoreTarget(Client& client, std::string name, std::int64_t permits)
        : semaphore_(client, std::move(name)), permits_(permits) {}
    std::optional<std::int64_t> try_acquire(Duration wait, Access) override {
        semaphore_.try_set_permits(permits_);
        return semaphore_.try_acquire_for(wait) ? std::optional<std::int64_t>(-1) : std::nullopt;
    }
    void release(Access) override { semaphore_.release(); }
    std::int64_t holds_left(Access) override { return -1; }

private:
    Semaphore semaphore_;
    std::int64_t permits_;
};

// One permit of a permit-expirable semaphore, with a lease of its own (5
// leases: past the longest critical section, so only a fault outlasts it),
// the count set before each acquire if absent, as SemaphoreTarget.
class ExpirableTarget : public Target {
public:
    ExpirableTarget(Client& client, std::string name, std::int64_t permits, Duration lease)
        : semaphore_(client, std::move(name)), permits_(permits), lease_(lease * 5) {}
    std::optional<std::int64_t> try_acquire(Duration wait, Access) override {
        semaphore_.try_set_permits(permits_);
        permit_ = semaphore_.try_acquire_for(wait, lease_);
        return permit_ ? std::optional<std::int64_t>(-1) : std::nullopt;
    }
    void release(Access) override { semaphore_.release(*permit_); }
    std::int64_t holds_left(Access) override { return -1; }

private:
    PermitExpirableSemaphore semaphore_;
    std::int64_t permits_;
    Duration lease_;
    std::optional<std::string> permit_;  // of the hold in progress
};

}  // namespace

ReplicaSync replica_sync_named(const std::string& name) {
    return name == "off" ? ReplicaSync::off : name == "wait" ? ReplicaSync::wait : ReplicaSync::required;
}

std::map<std::string, std::string> group_value_names() {
    std::map<std::string, std::string> names;
    for (const char* value = group_values; *value; ++value) names[MultiValueLock::field_of({value, 1})] = {value, 1};
    return names;
}

std::unique_ptr<Target> make_target(const WorkerOptions& o, Client& client, std::string name,
                                    std::function<void()> on_queued) {
    switch (o.primitive) {
        case Primitive::fenced:
            return std::make_unique<Fenced>(client, std::move(name));
        case Primitive::fair:
            return std::make_unique<Fair<FairLock>>(client, std::move(name), o.lock_port, std::move(on_queued));
        case Primitive::nonreentrant_fair:
            return std::make_unique<Fair<NonReentrantFairLock>>(client, std::move(name), o.lock_port,
                                                                std::move(on_queued));
        case Primitive::nonreentrant:
            return std::make_unique<OneSided<NonReentrantLock>>(client, std::move(name));
        case Primitive::group:
            return std::make_unique<Group>(client, std::move(name), o.seed);
        case Primitive::rwlock:
            return std::make_unique<ReadWrite>(client, std::move(name));
        case Primitive::semaphore:
            return std::make_unique<SemaphoreTarget>(client, std::move(name), o.permits);
        case Primitive::expirable:
            return std::make_unique<ExpirableTarget>(client, std::move(name), o.permits, o.lease);
        case Primitive::rlock:
            break;
    }
    return std::make_unique<OneSided<Lock>>(client, std::move(name));
}


}  // namespace holdfast::check
