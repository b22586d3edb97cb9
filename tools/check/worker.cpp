// A worker process: loops over the run's locks taking one at a time, does a
// read-modify-write on the resource inside the critical section, releases,
// and logs every step to its history. It never decides what is a violation.
#include "worker.hpp"

#include <memory>
#include <optional>
#include <random>
#include <thread>

#if __has_include("holdfast/fenced_lock.hpp")
#include "holdfast/fenced_lock.hpp"
#define HOLDFAST_CHECK_HAS_FENCED 1
#endif
#include "history.hpp"
#include "holdfast/holdfast.hpp"
#include "resource.hpp"
#include "status.hpp"

namespace holdfast::check {
namespace {

using namespace std::chrono_literals;

// One lock of the primitive under test, taken and released by the calling thread.
class LockUnderTest {
public:
    virtual ~LockUnderTest() = default;
    /// The fencing token (-1 for a primitive without), or nullopt when `wait` ran out.
    virtual std::optional<std::int64_t> try_acquire(Duration wait) = 0;
    virtual Lock& lock() = 0;
};

class ReentrantLock : public LockUnderTest {
public:
    ReentrantLock(Client& client, std::string name) : lock_(client, std::move(name)) {}
    std::optional<std::int64_t> try_acquire(Duration wait) override {
        return lock_.try_lock_for(wait) ? std::optional<std::int64_t>(-1) : std::nullopt;
    }
    Lock& lock() override { return lock_; }

private:
    Lock lock_;
};

#ifdef HOLDFAST_CHECK_HAS_FENCED
class Fenced : public LockUnderTest {
public:
    Fenced(Client& client, std::string name) : lock_(client, std::move(name)) {}
    std::optional<std::int64_t> try_acquire(Duration wait) override { return lock_.try_lock_and_get_token(wait); }
    Lock& lock() override { return lock_; }

private:
    FencedLock lock_;
};
#endif

std::unique_ptr<LockUnderTest> make_lock(Primitive primitive, Client& client, std::string name) {
#ifdef HOLDFAST_CHECK_HAS_FENCED
    if (primitive == Primitive::fenced) return std::make_unique<Fenced>(client, std::move(name));
#else
    if (primitive == Primitive::fenced) throw UsageError("FencedLock is not in this build of holdfast yet");
#endif
    return std::make_unique<ReentrantLock>(client, std::move(name));
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
          in_doubt_until_(options.locks, 0) {
        for (int k = 0; k < o_.locks; ++k) locks_.push_back(make_lock(o_.primitive, client, lock_name(k)));
    }

    void run() {
        while (!stopping()) {
            const int lock = pick(0, o_.locks - 1);
            if (now_ns() < in_doubt_until_[lock]) {
                std::this_thread::sleep_for(5ms);
                continue;
            }
            const long hold = ++hold_;
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
        history_.write(Event{now_ns(), o_.id, op, phase, lock, hold, token, value, std::move(message)});
    }

    // After an error, before the next try: a retrying client, as users write them.
    void back_off() { std::this_thread::sleep_for(Duration(pick(0, int(o_.lease.count() / 10)))); }

    // A call on `lock` failed and may or may not have run: the server may
    // still count a hold of this thread, which a new acquire would re-enter
    // (and the watchdog then renew for ever). Such a hold ends within a lease
    // of the call running, which a stalled server may delay: two leases and
    // two timeouts cover every nemesis here.
    void in_doubt(int lock) {
        if (!o_.retake_in_doubt) in_doubt_until_[lock] = now_ns() + 2 * to_ns(o_.lease + o_.timeout);
    }

    std::optional<std::int64_t> acquire(int lock, long hold) {
        const Nanos invoked = now_ns();
        history_.write(Event{invoked, o_.id, Op::acquire, Phase::invoke, lock, hold, -1, invoked + to_ns(o_.lease), {}});
        try {
            const auto token = locks_[lock]->try_acquire(o_.lease * 5);
            if (!token) {
                log(Op::acquire, Phase::fail, lock, hold, -1, -1, "timed out");
                return std::nullopt;
            }
            slot_.holding.store(lock);
            slot_.acquisitions.fetch_add(1);
            log(Op::acquire, Phase::ok, lock, hold, *token);
            return token;
        } catch (const ConnectionError& e) {  // the script may have run: outcome unknown
            log(Op::acquire, Phase::unknown, lock, hold, -1, -1, e.what());
            in_doubt(lock);
        } catch (const std::exception& e) {
            log(Op::acquire, Phase::fail, lock, hold, -1, -1, e.what());
        }
        back_off();
        return std::nullopt;
    }

    void critical_section(int lock, long hold, std::int64_t token) {
        const std::string id = hold_id(o_.id, hold);
        log(Op::read, Phase::invoke, lock, hold, token);
        const auto read = resource_.read(lock, id, token);
        if (!read.accepted) {
            log(Op::read, Phase::fail, lock, hold, token, read.value, "refused: token below the highest seen");
            return;
        }
        log(Op::read, Phase::ok, lock, hold, token, read.value);
        std::this_thread::sleep_for(Duration(pick(0, int(o_.max_section.count()))));
        log(Op::write, Phase::invoke, lock, hold, token, read.value + 1);
        const auto write = resource_.write(lock, id, token, read.value + 1);
        if (write.accepted) log(Op::write, Phase::ok, lock, hold, token, read.value + 1);
        else log(Op::write, Phase::fail, lock, hold, token, write.value, "refused: token below the highest seen");
    }

    void release(int lock, long hold, std::int64_t token) {
        slot_.holding.store(-1);
        log(Op::release, Phase::invoke, lock, hold, token);
        Lock& l = locks_[lock]->lock();
        try {
            l.unlock();
        } catch (const NotOwnerError& e) {  // the lease ran out: someone else may have held it meanwhile
            log(Op::release, Phase::fail, lock, hold, token, -1, e.what());
            return;
        } catch (const ConnectionError& e) {
            log(Op::release, Phase::unknown, lock, hold, token, -1, e.what());
            in_doubt(lock);
            back_off();
            return;
        } catch (const std::exception& e) {
            log(Op::release, Phase::fail, lock, hold, token, -1, e.what());
            back_off();
            return;
        }
        // Every hold is one acquisition, so the release must leave none behind.
        std::int64_t left = -1;
        std::string probe_error;
        try {
            left = l.hold_count();
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
    std::vector<Nanos> in_doubt_until_;
    std::vector<std::unique_ptr<LockUnderTest>> locks_;
    long hold_ = 0;
};

}  // namespace

bool fenced_lock_available() {
#ifdef HOLDFAST_CHECK_HAS_FENCED
    return true;
#else
    return false;
#endif
}

int run_worker(const WorkerOptions& options) {
    Config config;
    config.port = options.lock_port;
    config.timeout = options.timeout;
    config.connect_timeout = options.timeout;
    config.lock_watchdog_timeout = options.lease;
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
