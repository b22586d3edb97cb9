#include "capacity.hpp"

#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "cpu.hpp"
#include "holdfast/holdfast.hpp"
#include "sync_redis.hpp"

namespace holdfast::bench {
namespace {

// Heap in use now: every arena's allocated chunks plus mmapped blocks.
double heap_bytes() {
    const struct mallinfo2 m = ::mallinfo2();
    return static_cast<double>(m.uordblks + m.hblkhd);
}

}  // namespace

bool heap_measurable() {
    const auto probe = std::make_unique<char[]>(1 << 16);
    return heap_bytes() > 0;
}

namespace {

// The heap once it stops moving: the loop thread may still be finishing
// replies the caller has already been told about.
double settled_heap_bytes() {
    double last = heap_bytes();
    for (int i = 0; i < 50; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const double now = heap_bytes();
        if (now == last) break;
        last = now;
    }
    return last;
}

std::string fixed_seconds(double seconds) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", seconds);
    return buf;
}

long long keys_in(const Config& config) {
    support::SyncRedis raw(config.port);
    raw.command({"SELECT", std::to_string(config.database)});
    return raw.integer({"DBSIZE"});
}

// Waiters listed on the server (docs/design.md, "Targeted wake-ups") over
// the locks `prefix`0 .. `prefix`(locks - 1): a waiter counted waiting may
// still have its listing attempt (the second) in flight.
long long listed_waiters(const Config& config, const std::string& prefix, std::size_t locks) {
    support::SyncRedis raw(config.port);
    raw.command({"SELECT", std::to_string(config.database)});
    return raw.integer({"EVAL",
                        "local n = 0 for i = 0, tonumber(ARGV[2]) - 1 do "
                        "n = n + redis.call('zcard', 'holdfast_lock_waiters:{' .. ARGV[1] .. i .. '}') end return n",
                        "0", prefix, std::to_string(locks)});
}

void require_empty(const Config& config, const char* what) {
    if (const long long keys = keys_in(config); keys != 0)
        throw std::runtime_error(std::string(what) + ": database " + std::to_string(config.database) + " of port " +
                                 std::to_string(config.port) + " holds " + std::to_string(keys) +
                                 " keys; it needs an empty one");
}

// Counts the Client's events by kind (Config::on_event runs on its loop thread).
class EventCounts {
public:
    void watch(Config& config) {
        config.on_event = [this](const Event& e) {
            std::lock_guard lock(mutex_);
            ++counts_[std::string(to_string(e.kind))];
        };
    }
    std::map<std::string, long long> counts() const {
        std::lock_guard lock(mutex_);
        return counts_;
    }

private:
    mutable std::mutex mutex_;
    std::map<std::string, long long> counts_;
};

std::vector<Lock> make_locks(Client& client, const std::string& prefix, std::size_t n) {
    std::vector<Lock> locks;
    locks.reserve(n);
    for (std::size_t i = 0; i < n; ++i) locks.emplace_back(client, prefix + std::to_string(i));
    return locks;
}

// Counts completions of calls made with at most held_locks_in_flight in flight.
class Window {
public:
    // Blocks until a slot is free, then takes it.
    void enter() {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return in_flight_ < held_locks_in_flight; });
        ++in_flight_;
    }
    // Notifies under the mutex: once drain() sees none in flight the window
    // may be destroyed, so the loop thread must be done with it by then.
    void leave(bool ok) {
        std::lock_guard lock(mutex_);
        --in_flight_;
        if (!ok) ++failed_;
        changed_.notify_all();
    }
    // Waits for every call entered so far; returns how many of them failed.
    std::size_t drain() {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return in_flight_ == 0; });
        return failed_;
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::size_t in_flight_ = 0, failed_ = 0;
};

// Takes every lock for `owner`, watchdog-renewed; returns the failures.
std::size_t take_all(std::vector<Lock>& locks, const std::string& owner) {
    Window w;
    for (auto& lock : locks) {
        w.enter();
        lock.async_lock(owner, std::nullopt, {}, [&w](std::exception_ptr error, bool got) { w.leave(!error && got); });
    }
    return w.drain();
}

std::size_t release_all(std::vector<Lock>& locks, const std::string& owner) {
    Window w;
    for (auto& lock : locks) {
        w.enter();
        lock.async_release(owner, [&w](std::exception_ptr error) { w.leave(!error); });
    }
    return w.drain();
}

// What the waiters' completions report, kept apart from the library's heap:
// made before the first reading.
struct Drain {
    explicit Drain(std::size_t waiters) : grants(waiters) {}
    std::vector<std::atomic<unsigned char>> grants;  // per waiter: times granted
    std::atomic<std::size_t> ended{0};               // waiters granted or failed
    std::atomic<std::size_t> failed{0};              // waiters ended without the lock
    std::atomic<std::size_t> released{0};            // waiters' releases done
    std::atomic<std::size_t> release_failed{0};
    std::atomic<std::int64_t> last_grant_ns{0};
    std::mutex mutex;
    std::condition_variable changed;
    std::string first_error;  // under mutex: what the first waiter that failed was told

    void failed_with(const std::exception_ptr& error) {
        std::lock_guard lock(mutex);
        if (!first_error.empty()) return;
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            first_error = e.what();
        } catch (...) {
            first_error = "an exception not derived from std::exception";
        }
    }

    void notify() {
        { std::lock_guard lock(mutex); }
        changed.notify_all();
    }
};

// The holders release; each waiter, once granted, releases too (its completion
// does), handing the lock on. Times the drain to the last grant.
void drain_waiters(const Config& config, std::vector<Lock>& locks, const std::string& holder, Drain& drain,
                   Waiters& result, std::chrono::seconds limit) {
    const std::size_t n = result.waiters;
    const double server_before = server_cpu_seconds(config), own_before = own_cpu_seconds();
    const std::int64_t start = now_ns();
    release_all(locks, holder);
    {
        std::unique_lock lock(drain.mutex);
        drain.changed.wait_until(lock, std::chrono::steady_clock::now() + limit,
                                 [&] { return drain.ended.load() == n && drain.released.load() == n; });
    }
    const std::int64_t end = drain.last_grant_ns.load();
    result.drain_seconds = end > start ? static_cast<double>(end - start) / 1e9 : 0;
    result.server_us_per_change = (server_cpu_seconds(config) - server_before) * 1e6 / static_cast<double>(n);
    result.client_us_per_change = (own_cpu_seconds() - own_before) * 1e6 / static_cast<double>(n);
}

}  // namespace

HeldLocks run_held_locks(const Config& config, std::size_t n) {
    require_empty(config, "held locks");
    HeldLocks result;
    result.locks = n;
    EventCounts events;
    Config watched = config;
    events.watch(watched);
    Client client(watched);
    const std::string owner = client.new_owner();
    {  // connections made and scripts loaded, so that their cost is not counted per lock
        Lock warm(client, "bench:held:warm-up");
        warm.async_lock(owner).get();
        warm.async_release(owner).get();
    }
    const double empty = settled_heap_bytes();
    std::vector<Lock> locks = make_locks(client, "bench:held:", n);
    const double before = settled_heap_bytes();
    result.handle_bytes_per_lock = (before - empty) / static_cast<double>(n);

    const std::int64_t start = now_ns();
    result.failed += take_all(locks, owner);
    result.acquire_seconds = static_cast<double>(now_ns() - start) / 1e9;
    result.library_bytes_per_lock = (settled_heap_bytes() - before) / static_cast<double>(n);
    result.keys_while_held = keys_in(config);

    result.failed += release_all(locks, owner);
    result.left_bytes_per_lock = (settled_heap_bytes() - before) / static_cast<double>(n);
    result.keys_after = keys_in(config);
    result.events = events.counts();
    return result;
}

Waiters run_waiters(const Config& config, std::size_t n, std::size_t lock_count, std::chrono::seconds drain_limit) {
    require_empty(config, "waiters");
    Waiters result;
    result.waiters = n;
    result.locks = lock_count;
    Drain drain(n);  // outlives the client: a waiter the client's end fails still reports here
    EventCounts events;
    Config watched = config;
    events.watch(watched);
    {
        auto owned_client = std::make_unique<Client>(watched);
        Client& client = *owned_client;
        const std::string holder = client.new_owner();
        const std::string prefix = "bench:waited:";
        std::vector<Lock> locks = make_locks(client, prefix, lock_count);
        std::vector<std::string> owners;
        owners.reserve(n);
        for (std::size_t i = 0; i < n; ++i) owners.push_back(client.new_owner());
        if (const std::size_t failed = take_all(locks, holder); failed != 0)
            throw std::runtime_error("waiters: " + std::to_string(failed) + " of the holders' locks not taken");
        const double before = settled_heap_bytes();

        // The completions capture one pointer and an index: small enough for
        // std::function to keep inline, so the bench adds no heap per waiter.
        struct Context {
            Drain& drain;
            std::vector<Lock>& locks;
            std::vector<std::string>& owners;
            std::size_t n;
        } context{drain, locks, owners, n};
        // The client ends first, whatever happens: a waiter it fails then still finds the context.
        struct ClientEnd {
            std::unique_ptr<Client>& client;
            ~ClientEnd() { client.reset(); }
        } client_end{owned_client};
        const std::int64_t queued_from = now_ns();
        const std::int64_t give_up = now_ns() + std::chrono::nanoseconds(drain_limit).count();
        auto waiting = [&] { return client.metrics().primitives["lock"].waiting; };
        // Nothing may end before the holders release: an end means a holder's lease was lost or a call failed.
        auto stalled = [&] { return drain.ended.load() != 0 || now_ns() >= give_up; };
        for (std::size_t i = 0; i < n && !stalled(); ++i) {
            while (static_cast<std::int64_t>(i) - waiting() >= waiters_not_yet_waiting && !stalled())
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            locks[i % lock_count].async_lock(owners[i], std::nullopt, {}, [c = &context, i](std::exception_ptr error,
                                                                                              bool got) {
                Drain& d = c->drain;
                if (!error && got) {
                    // Granted: count it and hand the lock on at once, from the loop thread.
                    if (d.grants[i].fetch_add(1) == 0) d.last_grant_ns = now_ns();
                    c->locks[i % c->locks.size()].async_release(c->owners[i], [c](std::exception_ptr released_error) {
                        if (released_error) ++c->drain.release_failed;
                        if (++c->drain.released == c->n) c->drain.notify();
                    });
                } else {
                    if (error) d.failed_with(error);
                    ++d.failed;
                    if (++d.released == c->n) d.notify();
                }
                if (++d.ended == c->n) d.notify();
            });
        }
        // Every waiter refused once and waiting: the client counts them.
        while (waiting() < static_cast<std::int64_t>(n) && !stalled())
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        result.queue_seconds = static_cast<double>(now_ns() - queued_from) / 1e9;
        if (const auto counted = waiting(); counted < static_cast<std::int64_t>(n) || drain.ended.load() != 0) {
            result.failure = std::to_string(counted) + " of " + std::to_string(n) + " waiters counted waiting after " +
                             fixed_seconds(result.queue_seconds) + ", " + std::to_string(drain.ended.load()) +
                             " ended before any holder released (" + std::to_string(drain.failed.load()) +
                             " of them without the lock)";
        } else {
            // Timed from here the drain would include the queue's last attempts (a
            // quarter of the server's work at 300,000 waiters).
            const std::int64_t counted_at = now_ns();
            while ((result.listed = listed_waiters(config, prefix, lock_count)) < static_cast<long long>(n) &&
                   !stalled())
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            result.listing_seconds = static_cast<double>(now_ns() - counted_at) / 1e9;
            result.library_bytes_per_waiter = (settled_heap_bytes() - before) / static_cast<double>(n);
            drain_waiters(config, locks, holder, drain, result, drain_limit);
        }
    }  // a waiter still waiting is failed here, by the client's end

    for (const auto& g : drain.grants) {
        const unsigned times = g.load();
        if (times == 1) ++result.granted;
        else if (times > 1) ++result.granted_twice;
        else ++result.never_granted;
    }
    if (result.drain_seconds > 0) result.handoffs_per_s = static_cast<double>(result.granted) / result.drain_seconds;
    result.keys_after = keys_in(config);
    result.events = events.counts();
    result.first_error = drain.first_error;
    return result;
}

}  // namespace holdfast::bench
