// MultiLock: all or nothing, attempts in parallel, waiting without deadlock,
// nothing left behind on failure.
#include <future>
#include <mutex>
#include <thread>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

class MultiLocks : public RedisTest {
protected:
    // Nothing of a client's is left: renewals, subscriptions.
    static void expect_clean(Client& client) {
        EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
        EXPECT_TRUE(eventually([&] { return detail::core_of(client).transport.subscriber().channel_count() == 0; }));
    }
    long long exists(const std::string& key) { return raw->integer({"EXISTS", key}); }
};

TEST_F(MultiLocks, AllOrNothing) {
    Client client(config()), other(config());
    Lock a(client, "a"), b(client, "b"), c(client, "c");
    Lock b_elsewhere(other, "b");
    MultiLock all(a, b, c);
    b_elsewhere.lock();
    EXPECT_FALSE(all.try_lock());
    EXPECT_EQ(exists("a"), 0);  // taken and given back
    EXPECT_EQ(exists("c"), 0);
    EXPECT_TRUE(b_elsewhere.is_held_by_current_thread());
    b_elsewhere.unlock();

    EXPECT_TRUE(all.try_lock());
    for (Lock& lock : all.locks()) EXPECT_EQ(raw->string({"HGET", lock.name(), client.current_owner()}), "1");
    all.unlock();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
    expect_clean(client);
}

TEST_F(MultiLocks, AnyKindsOnAnyServers) {
    support::RedisServer second;
    Config second_config;
    second_config.port = second.port();
    Client here(config()), there(second_config);
    Lock reentrant(here, "orders");
    SimpleLock simple(there, "orders");  // the same name on another server is another lock
    SpinLock spin(here, "spun");
    FencedLock fenced(there, "fenced");
    MultiLock all({reentrant, simple, spin, fenced});
    {
        std::unique_lock guard(all, std::chrono::seconds(5));  // TimedLockable
        ASSERT_TRUE(guard.owns_lock());
        EXPECT_EQ(raw->string({"HGET", "orders", here.current_owner()}), "1");
        EXPECT_EQ(raw->string({"HGET", "spun", here.current_owner()}), "1");
        EXPECT_EQ(support::SyncRedis(second.port()).string({"GET", "orders"}), there.current_owner());
        EXPECT_EQ(support::SyncRedis(second.port()).string({"HGET", "fenced", there.current_owner()}), "1");
    }
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
    EXPECT_EQ(support::SyncRedis(second.port()).integer({"EXISTS", "orders", "fenced"}), 0);
    expect_clean(here);
    expect_clean(there);
}

// With the first lock's server stopped, the second lock is taken anyway: its
// attempt did not wait for the first one's reply.
TEST_F(MultiLocks, AttemptsAreAllInFlightAtOnce) {
    support::RedisServer second;
    Config first_config = config(), second_config = config();
    first_config.timeout = second_config.timeout = std::chrono::seconds(20);  // outlasts the pause
    second_config.port = second.port();
    Client first(first_config), other(second_config);
    Lock on_first(first, "job"), on_second(other, "job");
    MultiLock both(on_first, on_second);
    support::SyncRedis second_raw(second.port());
    const std::string owner = first.new_owner();

    server->pause();
    auto taken = both.async_try_lock(owner, std::chrono::milliseconds(0), std::chrono::seconds(30));
    const bool second_taken_meanwhile =
        eventually([&] { return second_raw.string({"HGET", "job", owner}) == "1"; });
    server->resume();
    EXPECT_TRUE(second_taken_meanwhile);
    EXPECT_TRUE(taken.get());
    EXPECT_EQ(raw->string({"HGET", "job", owner}), "1");
    both.async_release(owner).get();
    EXPECT_EQ(exists("job"), 0);
    EXPECT_EQ(second_raw.integer({"EXISTS", "job"}), 0);
}

// On one server, the attempts travel as one pipeline: with the server stopped
// they all queue up, and it reads them in two batches (the first command, then
// the rest behind its reply), not one read per lock.
TEST_F(MultiLocks, OneServerSeesOnePipelineNotOneRoundTripPerLock) {
    Config c = config();
    c.connection_pool_size = 1;
    c.timeout = std::chrono::seconds(20);
    Client client(c);
    std::vector<std::unique_ptr<Lock>> owned;
    std::vector<std::reference_wrapper<Lock>> locks;
    for (int i = 0; i < 8; ++i) {
        owned.push_back(std::make_unique<Lock>(client, "part:" + std::to_string(i)));
        locks.emplace_back(*owned.back());
    }
    MultiLock all(locks);
    const std::string owner = client.new_owner();
    all.lock(std::chrono::seconds(30));  // loads the script: no NOSCRIPT round below
    all.unlock();
    raw->command({"CONFIG", "RESETSTAT"});
    server->pause();
    auto taken = all.async_try_lock(owner, std::chrono::milliseconds(0), std::chrono::seconds(30));
    server->resume();
    ASSERT_TRUE(taken.get());
    const std::string stats = raw->string({"INFO", "stats"});
    const auto at = stats.find("total_reads_processed:");
    ASSERT_NE(at, std::string::npos) << stats;
    // The client's two batches and this INFO; one lock at a time would be 8 + 1.
    EXPECT_LE(std::stoll(stats.substr(at + 22)), 3);
    EXPECT_EQ(script_calls(), 8);
    all.async_release(owner).get();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(MultiLocks, WaitsForTheRefusedLockHoldingNothingElse) {
    Client client(config()), other(config());
    Lock a(client, "a"), b(client, "b"), c(client, "c");
    Lock b_elsewhere(other, "b");
    MultiLock all(a, b, c);
    b_elsewhere.lock();
    auto waiter = std::async(std::launch::async, [&] {
        if (!all.try_lock_for(std::chrono::seconds(30))) return false;
        all.unlock();
        return true;
    });
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{b}") == 1; }));
    EXPECT_EQ(exists("a"), 0);
    EXPECT_EQ(exists("c"), 0);
    b_elsewhere.unlock();
    EXPECT_TRUE(waiter.get());
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
    expect_clean(client);
}

TEST_F(MultiLocks, GivesUpAtTheDeadlineLeavingNothingBehind) {
    Client client(config()), other(config());
    Lock a(client, "a"), b(client, "b");
    Lock b_elsewhere(other, "b");
    MultiLock both(a, b);
    b_elsewhere.lock();
    EXPECT_FALSE(both.try_lock_for(std::chrono::milliseconds(300)));
    EXPECT_FALSE(both.try_lock_until(std::chrono::system_clock::now() + std::chrono::milliseconds(100)));
    EXPECT_EQ(exists("a"), 0);
    // Off the channel once the wait queues' linger is over (primitive/wait_queues.hpp).
    EXPECT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{b}") == 0; }));
    expect_clean(client);
    b_elsewhere.unlock();
}

// Two threads take the same three locks, one in the opposite order of the
// other, as std::scoped_lock would be asked to: neither may deadlock.
TEST_F(MultiLocks, OppositeOrdersDoNotDeadlock) {
    Client one(config()), two(config());
    Lock a1(one, "a"), b1(one, "b"), c1(one, "c");
    Lock a2(two, "a"), b2(two, "b"), c2(two, "c");
    MultiLock forward(a1, b1, c1), backward(c2, b2, a2);
    std::atomic<int> inside{0}, overlaps{0}, rounds{0};
    auto loop = [&](MultiLock& group) {
        return std::async(std::launch::async, [&] {
            for (int i = 0; i < 40; ++i) {
                std::scoped_lock guard(group);
                if (inside.fetch_add(1) != 0) ++overlaps;
                std::this_thread::yield();
                inside.fetch_sub(1);
                ++rounds;
            }
        });
    };
    auto f = loop(forward), g = loop(backward);
    ASSERT_EQ(f.wait_for(std::chrono::seconds(60)), std::future_status::ready) << "deadlock after " << rounds;
    ASSERT_EQ(g.wait_for(std::chrono::seconds(60)), std::future_status::ready) << "deadlock after " << rounds;
    f.get();
    g.get();
    EXPECT_EQ(rounds, 80);
    EXPECT_EQ(overlaps, 0);
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
    expect_clean(one);
    expect_clean(two);
}

TEST_F(MultiLocks, AnErrorReleasesWhatWasTaken) {
    Client client(config());
    raw->command({"SET", "b", "not a lock"});
    Lock a(client, "a"), b(client, "b"), c(client, "c");
    MultiLock all(a, b, c);
    try {
        all.lock();
        FAIL() << "locked a string key";
    } catch (const WrongTypeError& e) {
        EXPECT_NE(std::string(e.what()).find("'b'"), std::string::npos) << e.what();
    }
    EXPECT_EQ(exists("a"), 0);
    EXPECT_EQ(exists("c"), 0);
    EXPECT_EQ(raw->string({"GET", "b"}), "not a lock");
    expect_clean(client);
}

TEST_F(MultiLocks, UnlockReleasesEveryLockAndNamesTheOneLost) {
    Client client(config()), other(config());
    Lock a(client, "a"), b(client, "b"), c(client, "c");
    MultiLock all(a, b, c);
    all.lock();
    EXPECT_TRUE(Lock(other, "b").force_unlock());
    try {
        all.release();
        FAIL() << "unlocked a lost lock without a word";
    } catch (const NotOwnerError& e) {
        EXPECT_NE(std::string(e.what()).find("'b'"), std::string::npos) << e.what();
    }
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
    expect_clean(client);
}

TEST_F(MultiLocks, LeaseLostWhenAnyMemberIsLost) {
    Config c = config();
    c.lock_watchdog_timeout = std::chrono::milliseconds(1500);
    Client client(c);
    Lock a(client, "a"), b(client, "b");
    MultiLock both(a, b);
    EXPECT_FALSE(both.lease_lost_token().stop_possible());
    both.lock();
    std::stop_token lost = both.lease_lost_token();
    ASSERT_TRUE(lost.stop_possible());
    EXPECT_EQ(both.lease_lost_token(), lost);
    std::atomic<bool> told{false};
    std::stop_callback on_lost(lost, [&] { told = true; });
    raw->command({"DEL", "b"});
    EXPECT_TRUE(eventually([&] { return told.load(); }));
    EXPECT_THROW(both.release(), NotOwnerError);
    EXPECT_EQ(exists("a"), 0);
    EXPECT_FALSE(both.lease_lost_token().stop_possible());
    expect_clean(client);
}

TEST_F(MultiLocks, ReentrantMembersCountEachHold) {
    Client client(config());
    Lock a(client, "a"), b(client, "b");
    MultiLock both(a, b);
    both.lock();
    std::stop_token lost = both.lease_lost_token();
    both.lock();
    EXPECT_EQ(a.hold_count(), 2);
    EXPECT_EQ(b.hold_count(), 2);
    both.unlock();
    EXPECT_EQ(both.lease_lost_token(), lost);  // the same hold goes on
    EXPECT_EQ(b.hold_count(), 1);
    both.unlock();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
    expect_clean(client);
}

TEST_F(MultiLocks, AsyncOwnerAndExplicitLease) {
    Client client(config());
    Lock a(client, "a"), b(client, "b");
    MultiLock both(a, b);
    const std::string owner = client.new_owner();
    ASSERT_TRUE(both.async_try_lock(owner, std::chrono::seconds(1), std::chrono::seconds(20)).get());
    EXPECT_EQ(raw->string({"HGET", "a", owner}), "1");
    EXPECT_LE(raw->integer({"PTTL", "b"}), 20000);
    // An explicit lease is not renewed, but watched: the group is told before it ends.
    EXPECT_FALSE(detail::core_of(client).watchdog.renews("a", owner));
    EXPECT_FALSE(detail::core_of(client).watchdog.renews("b", owner));
    EXPECT_TRUE(both.lease_lost_token(owner).stop_possible());
    EXPECT_FALSE(both.try_lock());  // another owner: this thread
    std::async(std::launch::async, [&] { both.async_release(owner).get(); }).get();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
    EXPECT_THROW(both.async_release(owner).get(), NotOwnerError);
}

TEST_F(MultiLocks, BadArgumentsAreNamed) {
    Client client(config()), other(config());
    Lock a(client, "a"), b(client, "b"), a_again(client, "a"), a_other_client(other, "a");
    expect_invalid_argument([] { MultiLock(std::vector<std::reference_wrapper<Lock>>{}); }, "empty");
    expect_invalid_argument([&] { MultiLock(a, b, a); }, "locks[0] and locks[2]");
    expect_invalid_argument([&] { MultiLock(a, a_again); }, "'a'");
    expect_invalid_argument([&] { MultiLock(b, a_other_client, a); }, "locks[1] and locks[2]");
    MultiLock both(a, b);
    expect_invalid_argument([&] { both.lock(std::chrono::milliseconds(0)); }, "lease");
    expect_invalid_argument([&] { both.lock(std::chrono::years(101)); }, "too long");
    expect_invalid_argument([&] { both.try_lock_for(std::chrono::milliseconds(-1)); }, "wait");
    expect_invalid_argument([&] { both.async_lock("", std::nullopt); }, "owner");
    expect_invalid_argument([&] { both.async_try_lock(client.new_owner(), std::chrono::seconds(1), std::chrono::seconds(-1)); },
            "lease");
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
    // A wait too long for the clock means no deadline, not an overflow.
    ASSERT_TRUE(both.try_lock_for(std::chrono::hours::max()));
    both.unlock();
    ASSERT_TRUE(both.try_lock_until(std::chrono::steady_clock::time_point::max()));
    both.unlock();
}

TEST_F(MultiLocks, FuturesTakeAStopAndSayWhetherTaken) {
    Client client(config()), other(config());
    Lock a(client, "a"), b(client, "b"), theirs(other, "b");
    MultiLock both(a, b);
    theirs.lock();
    const std::string owner = client.new_owner();
    std::stop_source stop, stop_try;
    auto waiting = both.async_lock(owner, std::nullopt, stop.get_token());
    auto trying = both.async_try_lock(client.new_owner(), std::chrono::seconds(60), std::nullopt, stop_try.get_token());
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{b}") == 1; }));
    stop.request_stop();
    stop_try.request_stop();
    expect_stopped_untaken({&waiting, &trying});
    EXPECT_EQ(exists("a"), 0);  // nothing left held
    expect_clean(client);
    theirs.unlock();
    EXPECT_TRUE(both.async_lock(owner).get());
    both.async_release(owner).get();
}

TEST_F(MultiLocks, ALeasedWaitEndsWhenStopped) {
    Client client(config()), other(config());
    Lock a(client, "a"), b(client, "b"), theirs(other, "b");
    MultiLock both(a, b);
    theirs.lock();
    std::stop_source stop;
    auto waiting = std::async(std::launch::async, [&] { return both.lock(std::chrono::seconds(20), stop.get_token()); });
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{b}") == 1; }));
    stop.request_stop();
    ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_FALSE(waiting.get());
    EXPECT_EQ(exists("a"), 0);
    theirs.unlock();
    EXPECT_TRUE(both.try_lock_for(std::chrono::seconds(1), std::chrono::seconds(20), std::stop_token{}));
    EXPECT_LE(raw->integer({"PTTL", "a"}), 20000);
    EXPECT_FALSE(detail::core_of(client).watchdog.renews("a", client.current_owner()));
    both.unlock();
}

}  // namespace
}  // namespace holdfast::testing
