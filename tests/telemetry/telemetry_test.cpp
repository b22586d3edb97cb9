// Events and metrics (docs/operations.md): what happened reaches the
// operator's handler and moves its counter, against a real server.
#include <future>
#include <mutex>
#include <vector>

#include "redis_fixture.hpp"
#include "tcp_proxy.hpp"

namespace holdfast::testing {
namespace {

using Telemetry = RedisTest;

// Collects the events a client tells, from its loop thread.
class EventLog {
public:
    EventHandler handler() {
        return [this](const Event& e) {
            std::lock_guard lock(mutex_);
            events_.push_back(e);
        };
    }
    std::vector<Event> of(Event::Kind kind) const {
        std::lock_guard lock(mutex_);
        std::vector<Event> found;
        for (const Event& e : events_)
            if (e.kind == kind) found.push_back(e);
        return found;
    }
    bool has(Event::Kind kind) const { return !of(kind).empty(); }

private:
    mutable std::mutex mutex_;
    std::vector<Event> events_;
};

// Holds `lock` under an owner of its own while another thread waits for it
// (counted among the waiters) at least `wait`, then hands it over; returns
// once the waiter has taken and released it.
void hand_over_to_a_waiter(Client& client, Lock& lock, std::chrono::milliseconds wait) {
    const std::string holder = client.new_owner();
    lock.async_lock(holder).get();
    auto waiter = std::async(std::launch::async, [&] {
        lock.lock();
        lock.unlock();
    });
    ASSERT_TRUE(eventually([&] { return client.metrics().primitives.at("lock").waiting == 1; }, 10s));
    std::this_thread::sleep_for(wait);  // a wait to measure, not a timing assert
    lock.async_release(holder).get();
    waiter.get();
}

// The holder's ACL user loses its script rights mid-hold: each refused
// renewal is told and counted, then the lease is lost, told and counted.
TEST_F(Telemetry, RefusedRenewalIsToldAndCountedThenTheLostLease) {
    raw->command({"ACL", "SETUSER", "holder", "on", ">pw", "~*", "&*", "+@all"});
    EventLog log;
    Config c = config();
    c.username = "holder";
    c.password = "pw";
    c.lock_watchdog_timeout = 1500ms;
    c.on_event = log.handler();
    Client client(c);
    FairLock lock(client, "ledger");
    lock.lock();
    raw->command({"ACL", "SETUSER", "holder", "-evalsha", "-eval"});

    ASSERT_TRUE(eventually([&] { return log.has(Event::Kind::lease_lost); }, 10s));
    const auto failed = log.of(Event::Kind::renewal_failed);
    ASSERT_FALSE(failed.empty());
    EXPECT_EQ(failed.front().primitive, "fair_lock");
    EXPECT_EQ(failed.front().name, "ledger");
    EXPECT_EQ(failed.front().owner, client.current_owner());
    EXPECT_NE(failed.front().detail.find("NOPERM"), std::string::npos) << failed.front().detail;
    const Event lost = log.of(Event::Kind::lease_lost).front();
    EXPECT_EQ(lost.name, "ledger");
    EXPECT_EQ(lost.owner, client.current_owner());
    EXPECT_NE(lost.to_string().find("lease_lost: fair_lock 'ledger' owner"), std::string::npos) << lost.to_string();

    const Metrics m = client.metrics();
    const PrimitiveMetrics& fair = m.primitives.at("fair_lock");
    EXPECT_EQ(fair.acquired, 1u);
    EXPECT_EQ(fair.renewal_failures, failed.size());
    EXPECT_EQ(fair.leases_lost, 1u);
    raw->command({"ACL", "SETUSER", "holder", "+@all"});
    EXPECT_THROW(lock.release(), LeaseLostError);
}

// A connection cut and restored: both told, naming the server, and counted.
TEST_F(Telemetry, LostAndRestoredConnectionsAreToldAndCounted) {
    EventLog log;
    Config c = config();
    c.on_event = log.handler();
    c.client_name = "telemetry-test";
    Client client(c);
    Lock lock(client, "ledger");
    lock.lock();
    lock.unlock();
    raw->command({"CLIENT", "KILL", "SKIPME", "yes"});  // every other connection
    ASSERT_TRUE(eventually([&] { return log.has(Event::Kind::connection_restored); }, 10s));
    lock.lock();  // works again
    lock.unlock();
    const Event lost = log.of(Event::Kind::connection_lost).front();
    EXPECT_EQ(lost.server, "127.0.0.1:" + std::to_string(server->port()));
    EXPECT_FALSE(lost.detail.empty());
    EXPECT_GE(client.metrics().connections_lost, 1u);
    EXPECT_GE(client.metrics().reconnects, 1u);
}

// SCRIPT FLUSH: the next call is answered NOSCRIPT, and the reload is told.
TEST_F(Telemetry, ScriptReloadIsToldAndCounted) {
    EventLog log;
    Config c = config();
    c.on_event = log.handler();
    Client client(c);
    Lock lock(client, "ledger");
    // Until this client has loaded the acquire it runs from now on: a command
    // connection still in its handshake when the first acquire was sent ran
    // the checked one, not knowing yet that its user may run everything.
    ASSERT_TRUE(eventually([&] {
        lock.lock();
        lock.unlock();
        return trusted_acquire_loaded();
    }));
    raw->command({"SCRIPT", "FLUSH"});
    lock.lock();
    lock.unlock();
    const auto reloaded = log.of(Event::Kind::script_reloaded);
    ASSERT_FALSE(reloaded.empty());
    EXPECT_NE(reloaded.front().detail.find("lock_acquire"), std::string::npos) << reloaded.front().detail;
    EXPECT_EQ(client.metrics().scripts_reloaded, reloaded.size());
}

// A waiter that waited past the threshold is told, with how long; the wait
// and the hold land in their histograms, and the waiter gauge goes up and down.
TEST_F(Telemetry, SlowAcquireIsToldAndWaitsAreMeasured) {
    EventLog log;
    Config c = config();
    c.on_event = log.handler();
    c.slow_acquire_threshold = 100ms;
    Client client(c);
    Lock lock(client, "ledger");
    hand_over_to_a_waiter(client, lock, 200ms);

    const auto slow = log.of(Event::Kind::slow_acquire);
    ASSERT_EQ(slow.size(), 1u);
    EXPECT_EQ(slow.front().name, "ledger");
    EXPECT_GE(slow.front().waited, 200ms);
    const PrimitiveMetrics m = client.metrics().primitives.at("lock");
    EXPECT_EQ(m.acquired, 2u);
    EXPECT_EQ(m.waiting, 0);
    EXPECT_EQ(m.acquire_wait.count, 2u);
    EXPECT_GE(m.acquire_wait.sum, 200ms);
    EXPECT_EQ(m.hold_time.count, 2u);
    EXPECT_GE(m.hold_time.sum, 200ms);  // the first hold lasted through the wait
}

// Acquires are counted by outcome, per kind; Config::metrics off counts nothing.
TEST_F(Telemetry, AcquiresAreCountedByOutcomePerKind) {
    Client client(config());
    Semaphore semaphore(client, "permits");
    semaphore.try_set_permits(1);
    EXPECT_TRUE(semaphore.try_acquire());
    EXPECT_FALSE(semaphore.try_acquire());
    EXPECT_FALSE(semaphore.try_acquire_for(50ms));
    raw->command({"SET", "wrong", "x"});
    EXPECT_THROW(Lock(client, "wrong").try_lock(), WrongTypeError);
    const Metrics m = client.metrics();
    EXPECT_EQ(m.primitives.at("semaphore").acquired, 1u);
    EXPECT_EQ(m.primitives.at("semaphore").gave_up, 2u);
    EXPECT_EQ(m.primitives.at("lock").failed, 1u);
    EXPECT_FALSE(m.primitives.contains("fair_lock"));

    Config off = config();
    off.metrics = false;
    Client quiet(off);
    Lock(quiet, "other").try_lock();
    EXPECT_TRUE(quiet.metrics().primitives.empty());
}

// CLIENT LIST shows every connection of the client under its name: the one
// given, or "<program>-<client id>" by default.
TEST_F(Telemetry, ConnectionsCarryTheClientName) {
    Config c = config();
    c.client_name = "orders-service";
    Client named(c);
    Client unnamed(config());
    const auto count = [&](const std::string& name) {
        const std::string list = raw->string({"CLIENT", "LIST"});
        std::size_t n = 0;
        for (auto at = list.find(" name=" + name + " "); at != std::string::npos;
             at = list.find(" name=" + name + " ", at + 1))
            ++n;
        return n;
    };
    // Two command connections and one for pub/sub.
    EXPECT_TRUE(eventually([&] { return count("orders-service") == 3; })) << raw->string({"CLIENT", "LIST"});
    EXPECT_TRUE(eventually([&] { return count("holdfast_tests-" + unnamed.id()) == 3; }))
        << raw->string({"CLIENT", "LIST"});
    EXPECT_EQ(unnamed.config().client_name, "holdfast_tests-" + unnamed.id());

    Config none = config();
    none.client_name = "";
    Client anonymous(none);
    expect_invalid_argument([&] {
        Config bad = config();
        bad.client_name = "has space";
        Client refused(bad);
    }, "client_name");
}

// A user without CLIENT rights still connects, unnamed.
TEST_F(Telemetry, ARefusedClientNameLeavesTheConnectionUnnamed) {
    raw->command({"ACL", "SETUSER", "plain", "on", ">pw", "~*", "&*", "+@all", "-client"});
    Config c = config();
    c.username = "plain";
    c.password = "pw";
    c.client_name = "wanted";
    Client client(c);
    Lock lock(client, "ledger");
    lock.lock();
    lock.unlock();
    EXPECT_EQ(raw->string({"CLIENT", "LIST"}).find("name=wanted"), std::string::npos);
}

// A handler that throws does not break the lock that told it.
TEST_F(Telemetry, AThrowingHandlerIsContained) {
    Config c = config();
    c.slow_acquire_threshold = 0ms;
    std::atomic<int> told{0};
    c.on_event = [&](const Event&) {
        ++told;
        throw std::runtime_error("handler bug");
    };
    Client client(c);
    Lock lock(client, "ledger");
    hand_over_to_a_waiter(client, lock, 0ms);
    EXPECT_GE(told.load(), 1);
}

}  // namespace
}  // namespace holdfast::testing
