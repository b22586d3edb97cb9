// A tour of the lock family: each primitive once, on one throwaway
// redis-server (or REDIS_URL), printing what happens and what Redis holds.
// The RedLock gets five throwaway servers of its own.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "holdfast/holdfast.hpp"
#include "redis_server.hpp"
#ifdef HOLDFAST_TOUR_PROMETHEUS
#include <prometheus/text_serializer.h>

#include <sstream>

#include "holdfast/prometheus.hpp"
#endif

using namespace std::chrono_literals;

namespace {

void say(const std::string& line) { std::printf("  %s\n", line.c_str()); }
void section(const std::string& title) { std::printf("\n%s\n", title.c_str()); }

void reentrant_lock(holdfast::Client& client) {
    section("Lock (Redisson's RLock): reentrant, watchdog-renewed");
    holdfast::Lock lock(client, "tour:lock");
    lock.lock();
    lock.lock();
    say("locked twice by this thread: hold count " + std::to_string(lock.hold_count()) + ", lease " +
        std::to_string(lock.remaining_ttl()->count()) + " ms, renewed every third of it");
    lock.unlock();
    lock.unlock();
    say("unlocked twice: locked now? " + std::string(lock.is_locked() ? "yes" : "no"));
    {
        std::lock_guard guard(lock);  // unlock() throws nothing: safe in any guard
        holdfast::Lock(client, "tour:lock").force_unlock();  // an operator frees it meanwhile
    }
    say("force-unlocked under a std::lock_guard: the guard's unlock reported it (release_failed) and "
        "did not throw");
    lock.lock();
    lock.force_unlock();
    try {
        lock.release();  // the checked form, for code that must know
    } catch (const holdfast::NotOwnerError& e) {
        say(std::string("release(), the checked form, says: ") + e.what());
    }
}

void fair_lock(holdfast::Client& client) {
    section("FairLock: waiters served in arrival order");
    holdfast::FairLock lock(client, "tour:fair");
    lock.lock();
    std::string order;
    std::mutex mutex;
    std::vector<std::future<void>> waiters;
    for (char who : {'A', 'B', 'C'}) {
        const std::string owner = client.new_owner();
        waiters.push_back(std::async(std::launch::async, [&, who, owner] {
            lock.async_lock(owner).get();
            {
                std::lock_guard guard(mutex);
                order += who;
            }
            lock.async_release(owner).get();
        }));
        std::this_thread::sleep_for(200ms);  // let each join the queue before the next
    }
    lock.unlock();
    for (auto& w : waiters) w.get();
    say("queued A, B, C behind the holder; served in order " + order);
}

void spin_lock(holdfast::Client& client) {
    section("SpinLock: no pub/sub, backoff from 1 ms to 128 ms");
    holdfast::SpinLock held(client, "tour:spin");
    held.lock(300ms);
    const auto start = std::chrono::steady_clock::now();
    auto waiter = std::async(std::launch::async, [&] {
        const bool got = held.try_lock_for(5s);  // this thread's own hold
        if (got) held.unlock();
        return got;
    });
    const bool got = waiter.get();
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    say("a 300 ms lease, a second thread polling: got it " + std::string(got ? "after " : "not, after ") +
        std::to_string(waited.count()) + " ms, when the lease ran out");
}

void fenced_lock(holdfast::Client& client) {
    section("FencedLock: a token that rises with every acquisition");
    holdfast::FencedLock lock(client, "tour:fenced");
    const auto first = lock.lock_and_get_token();
    lock.unlock();
    const auto second = lock.lock_and_get_token();
    lock.unlock();
    say("two acquisitions, tokens " + std::to_string(first) + " then " + std::to_string(second) +
        ": a resource that refuses lower tokens turns a paused old holder away");
}

void read_write_lock(holdfast::Client& client) {
    section("ReadWriteLock: readers share, a writer excludes");
    holdfast::ReadWriteLock rw(client, "tour:rw");
    const std::string reader1 = client.new_owner(), reader2 = client.new_owner(), writer = client.new_owner();
    rw.read_lock().async_lock(reader1).get();
    rw.read_lock().async_lock(reader2).get();
    say("two readers hold it together: " + std::to_string(rw.read_lock().holders().size()) + " holders");
    const bool writer_got = rw.write_lock().async_try_lock(writer, 200ms).get();
    say("a writer waiting 200 ms meanwhile: " + std::string(writer_got ? "got it (wrong!)" : "refused"));
    rw.read_lock().async_release(reader1).get();
    rw.read_lock().async_release(reader2).get();
    say("readers gone, the writer now: " +
        std::string(rw.write_lock().async_try_lock(writer).get() ? "got it" : "refused"));
    rw.write_lock().async_release(writer).get();
}

void simple_lock(holdfast::Client& client) {
    section("SimpleLock: SET NX PX, the key go-redsync and node-redlock use");
    holdfast::SimpleLock lock(client, "tour:simple");
    lock.lock();
    say("held: the key is a plain string holding the token " + lock.holders().front().owner);
    say("taken again by its holder? " + std::string(lock.try_lock() ? "yes (wrong!)" : "no: it is not reentrant"));
    lock.unlock();
}

void multi_lock(holdfast::Client& client) {
    section("MultiLock: all of several locks, or none");
    holdfast::Lock order(client, "tour:order"), invoice(client, "tour:invoice");
    holdfast::SimpleLock stock(client, "tour:stock");
    holdfast::MultiLock all(order, invoice, stock);
    const std::string someone = client.new_owner();
    invoice.async_lock(someone, 10s).get();
    const bool got = all.try_lock();
    say("invoice held by someone else, all three at once? " + std::string(got ? "yes (wrong!)" : "no") +
        "; order given back meanwhile? " + std::string(order.is_locked() ? "no (wrong!)" : "yes"));
    invoice.async_release(someone).get();
    std::scoped_lock guard(all);
    say("invoice free: all three taken, every attempt sent before any reply was read");
}

void red_lock() {
    section("RedLock: a majority of five independent servers");
    std::vector<std::unique_ptr<holdfast::support::RedisServer>> servers;
    std::vector<std::unique_ptr<holdfast::Client>> clients;
    std::vector<std::unique_ptr<holdfast::Lock>> locks;
    std::vector<std::reference_wrapper<holdfast::Lock>> members;
    for (int i = 0; i < 5; ++i) {
        servers.push_back(std::make_unique<holdfast::support::RedisServer>());
        clients.push_back(std::make_unique<holdfast::Client>(servers.back()->url()));
        locks.push_back(std::make_unique<holdfast::Lock>(*clients.back(), "tour:red"));
        members.emplace_back(*locks.back());
    }
    holdfast::RedLock red(members);
    servers[3]->kill();
    servers[4]->kill();
    red.lock(10s);
    say("two of five servers killed, locked anyway (a quorum is " + std::to_string(red.quorum()) +
        "), valid for " + std::to_string(red.validity()->count()) + " ms more by this clock");
    red.unlock();
    servers[2]->kill();
    try {
        red.try_lock();
        say("a third server killed: locked (wrong!)");
    } catch (const holdfast::ConnectionError& e) {
        say(std::string("a third server killed: ") + e.what());
    }
}

void semaphore(holdfast::Client& client) {
    section("Semaphore (RSemaphore): N permits, waiters woken by a release");
    holdfast::Semaphore slots(client, "tour:slots");
    slots.try_set_permits(2);
    slots.acquire();
    slots.acquire();
    say("two of two permits taken; a third? " + std::string(slots.try_acquire() ? "yes (wrong!)" : "no"));
    auto waiter = std::async(std::launch::async, [&slots] { return slots.try_acquire_for(10s); });
    slots.release();
    say("one released: the waiter got it? " + std::string(waiter.get() ? "yes" : "no (wrong!)"));
    slots.release(2);
    say("all back: " + std::to_string(slots.available_permits()) + " permits free");
}

void permit_expirable_semaphore(holdfast::Client& client) {
    section("PermitExpirableSemaphore: permits with a lease, back if their holder dies");
    holdfast::PermitExpirableSemaphore pool(client, "tour:pool");
    pool.try_set_permits(1);
    const std::string permit = pool.acquire(300ms);  // a holder that never gives it back
    say("permit " + permit + " taken for 300 ms and abandoned; free now: " +
        std::to_string(pool.available_permits()));
    const auto next = pool.try_acquire_for(10s);
    say("its lease ran out: taken again? " + std::string(next ? "yes, as " + *next : "no (wrong!)"));
    if (next) pool.release(*next);
}

void count_down_latch(holdfast::Client& client) {
    section("CountDownLatch: wait until three workers are done");
    holdfast::CountDownLatch done(client, "tour:done");
    done.try_set_count(3);
    std::vector<std::thread> workers;
    for (int i = 0; i < 3; ++i) workers.emplace_back([&done] { done.count_down(); });
    const bool opened = done.await_for(10s);
    for (auto& w : workers) w.join();
    say("three count_down() calls from other threads: the waiter woke? " +
        std::string(opened ? "yes" : "no (wrong!)"));
}

// What the client counted on the way, as a Prometheus scrape reads it
// (docs/operations.md): the lines that are not zero, without the histograms' buckets.
void metrics([[maybe_unused]] const holdfast::Client& client) {
#ifdef HOLDFAST_TOUR_PROMETHEUS
    section("Metrics: what the client counted, as Prometheus scrapes them (holdfast::prometheus)");
    const auto collectable = holdfast::prometheus_collectable(client);
    std::istringstream text(prometheus::TextSerializer().Serialize(collectable->Collect()));
    for (std::string line; std::getline(text, line);)
        if (!line.starts_with("#") && line.find("_bucket{") == std::string::npos && !line.ends_with(" 0")) say(line);
#endif
}

}  // namespace

int main() {
    try {
        std::optional<holdfast::support::RedisServer> server;
        std::string url = std::getenv("REDIS_URL") ? std::getenv("REDIS_URL") : "";
        if (url.empty()) {
            server.emplace();
            url = server->url();
        }
        std::printf("holdfast tour on %s\n", url.c_str());
        holdfast::Client client(url);
        reentrant_lock(client);
        fair_lock(client);
        spin_lock(client);
        fenced_lock(client);
        read_write_lock(client);
        simple_lock(client);
        multi_lock(client);
        semaphore(client);
        permit_expirable_semaphore(client);
        count_down_latch(client);
        red_lock();
        metrics(client);
        std::printf("\ndone\n");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tour: %s\n", e.what());
        return 1;
    }
}
