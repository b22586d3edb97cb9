// A worker process: loops over the run's locks taking one at a time, does a
// read-modify-write on the resource inside the critical section (a reader
// only reads; a semaphore's holder only adds itself to a set), releases, and
// logs every step to its history. It never decides what is a violation.
#include "worker.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <stop_token>
#include <thread>

#include "history.hpp"
#include "holdfast/holdfast.hpp"
#include "resource.hpp"
#include "status.hpp"
#include "targets.hpp"

namespace holdfast::check {
namespace {

using namespace std::chrono_literals;

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
        int lock = pick(0, o_.locks - 1);
        while (!stopping()) {
            const long hold = ++hold_;
            access_ = o_.primitive == Primitive::rwlock && pick(0, 1) ? Access::shared : Access::exclusive;
            bool released = true;
            if (const auto token = acquire(lock, hold)) {
                critical_section(lock, hold, *token);
                released = release(lock, hold, *token);
            }
            // --relock (pause-replica): half the time the same lock again at
            // once, as a caller that unlocks and locks again does, even after
            // a release that failed (unconfirmed by replicas, say).
            if (o_.relock && pick(0, 1)) continue;
            if (!released) back_off();
            lock = pick(0, o_.locks - 1);
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
        const std::string values = targets_[lock]->next_values();
        history_.write(Event{invoked, o_.id, Op::acquire, Phase::invoke, lock, hold, access_, -1,
                             invoked + to_ns(o_.lease),
                             values.empty() ? owner_ : owner_ + std::string(values_note) + values});
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
        if (is_semaphore(o_.primitive)) {  // up to N holders at once: no read-modify-write
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

    // False if the release failed (or its outcome is unknown): the caller backs off.
    bool release(int lock, long hold, std::int64_t token) {
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
            return true;
        } catch (const ConnectionError& e) {
            log(Op::release, Phase::unknown, lock, hold, token, -1, e.what());
            check_renewal();
            return false;
        } catch (const ReplicaSyncError& e) {  // gone on the master, no replica confirmed it: sent again later
            log(Op::release, Phase::fail, lock, hold, token, -1, std::string(unconfirmed_release) + e.what());
            check_renewal();
            return false;
        } catch (const std::exception& e) {  // refused (revoke-rights: NOPERM), unconfirmed (ReplicaSyncError)
            log(Op::release, Phase::fail, lock, hold, token, -1, e.what());
            check_renewal();
            return false;
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
        return true;
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
    config.replica_sync = replica_sync_named(options.replica_sync);
    config.replica_sync_timeout = options.replica_sync_timeout;
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
