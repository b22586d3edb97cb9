// A worker process: loops over the run's locks taking one at a time, does a
// read-modify-write on the resource inside the critical section (a reader
// only reads; a semaphore's holder only adds itself to a set), releases, and
// logs every step to its history. It never decides what is a violation.
#include "worker.hpp"

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <stop_token>
#include <thread>

#include "history.hpp"
#include "holdfast/holdfast.hpp"
#include "primitive/names.hpp"
#include "resource.hpp"
#include "status.hpp"

namespace holdfast::check {
namespace {

using namespace std::chrono_literals;

// One lock (or semaphore) of the primitive under test, taken and released
// by the calling thread. `access` matters only to a ReadWriteLock.
class Target {
public:
    virtual ~Target() = default;
    /// The fencing token (-1 for a primitive without), or nullopt when `wait` ran out.
    virtual std::optional<std::int64_t> try_acquire(Duration wait, Access access) = 0;
    virtual void release(Access access) = 0;
    /// Whether the caller's hold is still renewed (a semaphore's permits never are).
    virtual bool renewed(Access) { return false; }
    /// Holds the caller still has after its release; -1 where the primitive does not count them.
    virtual std::int64_t holds_left(Access access) = 0;
    /// lease_lost_token() of the calling thread's hold; none (stop_possible()
    /// false) where the primitive has none (a semaphore's permit has no lease).
    virtual std::stop_token lost_token(Access) { return {}; }
};

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
// had joined the queue by then.
class Fair : public OneSided<FairLock> {
public:
    Fair(Client& client, std::string name, std::uint16_t port, std::function<void()> on_queued)
        : OneSided(client, name, fair_wait_budget),
          client_(client),
          queue_(detail::fair_queue_key(lock_.name())),  // the key, under any Config::key_prefix
          port_(port),
          on_queued_(std::move(on_queued)) {}

    std::optional<std::int64_t> try_acquire(Duration wait, Access) override {
        const std::string owner = client_.current_owner();  // as unlock() and hold_count() use
        auto taken = lock_.async_try_lock(owner, wait);
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

// `on_queued`: a FairLock waiter has seen itself in the queue.
std::unique_ptr<Target> make_target(const WorkerOptions& o, Client& client, std::string name,
                                    std::function<void()> on_queued) {
    switch (o.primitive) {
        case Primitive::fenced:
            return std::make_unique<Fenced>(client, std::move(name));
        case Primitive::fair:
            return std::make_unique<Fair>(client, std::move(name), o.lock_port, std::move(on_queued));
        case Primitive::rwlock:
            return std::make_unique<ReadWrite>(client, std::move(name));
        case Primitive::semaphore:
            return std::make_unique<SemaphoreTarget>(client, std::move(name), o.permits);
        case Primitive::rlock:
            break;
    }
    return std::make_unique<OneSided<Lock>>(client, std::move(name));
}

class Worker {
public:
    Worker(const WorkerOptions& options, Client& client)
        : o_(options),
          status_(options.status, false),
          slot_(status_.page().slots[options.slot]),
          history_(options.history),
          resource_(options.resource_port, options.primitive == Primitive::fenced),
          random_(options.seed),
          owner_(client.current_owner()) {
        for (int k = 0; k < o_.locks; ++k)
            targets_.push_back(
                make_target(o_, client, lock_name(k), [this, k] { log(Op::queued, Phase::ok, k, hold_, -1); }));
    }

    void run() {
        while (!stopping()) {
            const int lock = pick(0, o_.locks - 1);
            const long hold = ++hold_;
            access_ = o_.primitive == Primitive::rwlock && pick(0, 1) ? Access::shared : Access::exclusive;
            if (const auto token = acquire(lock, hold)) {
                critical_section(lock, hold, *token);
                release(lock, hold, *token);
            }
        }
    }

private:
    bool stopping() { return status_.page().stop.load() != 0; }
    int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(random_); }

    void log(Op op, Phase phase, int lock, long hold, std::int64_t token, std::int64_t value = -1,
             std::string message = {}) {
        history_.write(Event{now_ns(), o_.id, op, phase, lock, hold, access_, token, value, std::move(message)});
    }

    // After an error, before the next try: a retrying client, as users write them.
    // A call of unknown outcome is retried like any other: if it ran, the
    // library must give back the hold no caller was told of (RELIABILITY.md,
    // finding 1), and the leaked-hold probe after each release checks it.
    void back_off() { std::this_thread::sleep_for(Duration(pick(0, int(o_.lease.count() / 10)))); }

    std::optional<std::int64_t> acquire(int lock, long hold) {
        const Nanos invoked = now_ns();
        // The owner id (every call comes from this thread): the checker looks for it on the server after a release.
        history_.write(Event{invoked, o_.id, Op::acquire, Phase::invoke, lock, hold, access_, -1,
                             invoked + to_ns(o_.lease), owner_});
        slot_.waiting_since.store(invoked);
        slot_.waiting.store(lock);
        struct Done {  // the call is over, however it ends
            WorkerSlot& slot;
            ~Done() { slot.waiting.store(-1); }
        } done{slot_};
        try {
            const auto token = targets_[lock]->try_acquire(o_.acquire_wait, access_);
            if (!token) {
                log(Op::acquire, Phase::fail, lock, hold, -1, -1, "timed out");
                return std::nullopt;
            }
            slot_.holding.store(lock);
            slot_.acquisitions.fetch_add(1);
            // Watched before the ack is logged: a hold already lost when the
            // call returned logs `lost` first, told from its very start.
            watch_lease(lock, hold, *token);
            log(Op::acquire, Phase::ok, lock, hold, *token);
            return token;
        } catch (const ConnectionError& e) {  // the script may have run: outcome unknown
            log(Op::acquire, Phase::unknown, lock, hold, -1, -1, e.what());
        } catch (const std::exception& e) {
            log(Op::acquire, Phase::fail, lock, hold, -1, -1, e.what());
        }
        back_off();
        return std::nullopt;
    }

    // Logs `lost` when the library tells this hold its lease is gone. The
    // callback runs on the client's loop thread (or here, if already lost);
    // HistoryWriter writes each line with one write(2), safe from any thread.
    void watch_lease(int lock, long hold, std::int64_t token) {
        told_.store(false);
        const std::stop_token lost = targets_[lock]->lost_token(access_);
        if (!lost.stop_possible()) return;
        lost_watch_.emplace(lost, [this, e = Event{0, o_.id, Op::lost, Phase::ok, lock, hold, access_, token, -1, {}}] {
            told_.store(true);
            Event event = e;
            event.time = now_ns();
            history_.write(event);
        });
    }

    // Once told, the holder stops acting on the resource, as an application
    // watching lease_lost_token() does: what it did before is the checker's to judge.
    bool told() const { return told_.load(); }

    // The critical section's work, announced on the status page: the
    // partition nemesis picks the holder that stays inside the longest.
    void stay_inside() {
        const Duration section(pick(0, int(o_.max_section.count())));
        slot_.section_ends.store(now_ns() + to_ns(section));
        std::this_thread::sleep_for(section);
    }

    void critical_section(int lock, long hold, std::int64_t token) {
        const std::string id = hold_id(o_.id, hold);
        if (o_.primitive == Primitive::semaphore) {  // up to N holders at once: no read-modify-write
            stay_inside();
            log(Op::write, Phase::invoke, lock, hold, token);
            const auto added = resource_.add(lock, id);
            log(Op::write, Phase::ok, lock, hold, token, added.value);
            return;
        }
        if (told()) return;
        log(Op::read, Phase::invoke, lock, hold, token);
        const auto read = resource_.read(lock, id, token);
        if (!read.accepted) {
            log(Op::read, Phase::fail, lock, hold, token, read.value, "refused: token below the highest seen");
            return;
        }
        log(Op::read, Phase::ok, lock, hold, token, read.value);
        stay_inside();
        if (access_ == Access::shared || told()) return;  // a reader only reads
        log(Op::write, Phase::invoke, lock, hold, token, read.value + 1);
        const auto write = resource_.write(lock, id, token, read.value + 1);
        if (write.accepted) log(Op::write, Phase::ok, lock, hold, token, read.value + 1);
        else log(Op::write, Phase::fail, lock, hold, token, write.value, "refused: token below the highest seen");
    }

    void release(int lock, long hold, std::int64_t token) {
        slot_.holding.store(-1);
        slot_.section_ends.store(0);
        lost_watch_.reset();  // the hold ends here: a later loss is not this hold's
        log(Op::release, Phase::invoke, lock, hold, token);
        Target& target = *targets_[lock];
        // Whatever its outcome, a release that was tried ends the renewal.
        const auto check_renewal = [&] {
            if (target.renewed(access_)) log(Op::renewed, Phase::ok, lock, hold, token, -1, "after its release");
        };
        try {
            target.release(access_);
        } catch (const NotOwnerError& e) {  // the lease ran out: someone else may have held it meanwhile
            log(Op::release, Phase::fail, lock, hold, token, -1, e.what());
            check_renewal();
            return;
        } catch (const ConnectionError& e) {
            log(Op::release, Phase::unknown, lock, hold, token, -1, e.what());
            check_renewal();
            back_off();
            return;
        } catch (const std::exception& e) {  // refused (revoke-rights: NOPERM)
            log(Op::release, Phase::fail, lock, hold, token, -1, e.what());
            check_renewal();
            back_off();
            return;
        }
        check_renewal();
        // Every hold is one acquisition, so the release must leave none behind.
        std::int64_t left = -1;
        std::string probe_error;
        try {
            left = target.holds_left(access_);
        } catch (const std::exception& e) {
            probe_error = std::string("hold count probe failed: ") + e.what();
        }
        log(Op::release, Phase::ok, lock, hold, token, left, probe_error);
    }

    const WorkerOptions& o_;
    SharedStatus status_;
    WorkerSlot& slot_;
    HistoryWriter history_;
    Resource resource_;
    std::mt19937_64 random_;
    std::string owner_;  // the owner id this thread's holds take
    std::vector<std::unique_ptr<Target>> targets_;
    long hold_ = 0;
    Access access_ = Access::exclusive;  // of the hold in progress
    std::atomic<bool> told_{false};      // the hold in progress was told it was lost
    std::optional<std::stop_callback<std::function<void()>>> lost_watch_;  // destroyed before history_
};

}  // namespace

int run_worker(const WorkerOptions& options) {
    Config config = options.lock_url.empty() ? Config{} : Config::from_uri(options.lock_url);
    config.port = options.lock_port;
    config.replica_sync = options.replica_sync == "off"    ? ReplicaSync::off
                          : options.replica_sync == "wait" ? ReplicaSync::wait
                                                           : ReplicaSync::required;
    config.timeout = options.timeout;
    config.connect_timeout = options.timeout;
    config.lock_watchdog_timeout = options.lease;
    if (options.acl_users) {
        config.username = acl_user_of(options.slot);
        config.password = acl_password;
    }
    SharedStatus status(options.status, false);
    // The server may be down (a restart nemesis) when a replacement worker starts.
    std::unique_ptr<Client> client;
    while (!client && status.page().stop.load() == 0) {
        try {
            client = std::make_unique<Client>(config);
        } catch (const ConnectionError&) {
            std::this_thread::sleep_for(50ms);
        }
    }
    if (!client) return 0;
    Worker(options, *client).run();
    return 0;
}

}  // namespace holdfast::check
