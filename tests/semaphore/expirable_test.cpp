// holdfast::PermitExpirableSemaphore: named, leased permits in Redisson's
// layout; a dead holder's permit comes back when its lease ends.
#include <future>
#include <thread>

#include "core/client_core.hpp"
#include "pool_keys.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

long long epoch_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The 16 bytes a permit id's 32 hex digits spell, as Redisson stores them.
std::string bytes_of(const std::string& hex) {
    std::string bytes;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    return bytes;
}

bool is_permit_id(const std::string& id) {
    return id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

using ExpirableSemaphore = RedisTest;

TEST_F(ExpirableSemaphore, PermitsAreLeasedIdsInAZsetBesideTheCount) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", channel});
    ASSERT_TRUE(pool.try_set_permits(2));
    EXPECT_EQ(std::string(listener.read_reply()->element[2]->str), "2");

    const long long before = epoch_ms();
    const auto leased = pool.try_acquire(std::chrono::seconds(10));
    ASSERT_TRUE(leased);
    EXPECT_TRUE(is_permit_id(*leased)) << *leased;
    const auto forever = pool.try_acquire();
    ASSERT_TRUE(forever);
    EXPECT_NE(*leased, *forever);
    EXPECT_FALSE(pool.try_acquire());

    EXPECT_EQ(raw->string({"GET", "pool"}), "0");
    EXPECT_EQ(raw->string({"TYPE", "{pool}:timeout"}), "zset");
    const long long leased_end = std::stoll(raw->string({"ZSCORE", "{pool}:timeout", bytes_of(*leased)}));
    EXPECT_GE(leased_end, before + 10000);
    EXPECT_LE(leased_end, epoch_ms() + 10000);
    EXPECT_EQ(raw->string({"ZSCORE", "{pool}:timeout", bytes_of(*forever)}), "922337203685477");
    EXPECT_EQ(raw->integer({"DBSIZE"}), 2);

    pool.release(*leased);
    EXPECT_EQ(std::string(listener.read_reply()->element[2]->str), "1");  // the number released
    pool.release(*forever);
    EXPECT_EQ(std::string(listener.read_reply()->element[2]->str), "1");
    EXPECT_EQ(raw->string({"GET", "pool"}), "2");
    EXPECT_EQ(raw->integer({"EXISTS", "{pool}:timeout"}), 0);  // nothing held, nothing left
    EXPECT_EQ(pool.available_permits(), 2);
}

TEST_F(ExpirableSemaphore, ReleasingWhatIsNotHeldIsAnError) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    pool.try_set_permits(1);
    const std::string id = *pool.try_acquire();
    pool.release(id);
    try {
        pool.release(id);
        FAIL() << "released a permit twice";
    } catch (const NotOwnerError& e) {
        EXPECT_NE(std::string(e.what()).find(id), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("'pool'"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(pool.try_release(id));
    EXPECT_FALSE(pool.try_release(std::string(32, 'a')));
    EXPECT_THROW(pool.async_release(id).get(), NotOwnerError);
    EXPECT_THROW(pool.release("not-a-permit"), std::invalid_argument);
    EXPECT_THROW(pool.release(std::string(32, 'g')), std::invalid_argument);
    EXPECT_THROW(pool.try_acquire(std::chrono::milliseconds(0)), std::invalid_argument);
    EXPECT_THROW(pool.try_acquire_for(std::chrono::milliseconds(-1)), std::invalid_argument);
    EXPECT_THROW(pool.update_lease(id, std::chrono::milliseconds(-1)), std::invalid_argument);
    EXPECT_THROW(PermitExpirableSemaphore(client, ""), std::invalid_argument);
    EXPECT_EQ(raw->string({"GET", "pool"}), "1");  // released once, counted once
}

TEST_F(ExpirableSemaphore, AnEndedLeaseReturnsThePermitAndItsReleaseFails) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    pool.try_set_permits(1);
    const std::string id = *pool.try_acquire(std::chrono::milliseconds(200));
    EXPECT_EQ(pool.available_permits(), 0);
    EXPECT_TRUE(eventually([&] { return pool.available_permits() == 1; }));
    EXPECT_THROW(pool.release(id), NotOwnerError);
    EXPECT_EQ(pool.available_permits(), 1);  // returned once, not twice
    EXPECT_FALSE(pool.update_lease(id, std::chrono::seconds(5)));
}

TEST_F(ExpirableSemaphore, UpdateLeaseMovesTheEnd) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    pool.try_set_permits(1);
    const std::string id = *pool.try_acquire(std::chrono::seconds(1));
    ASSERT_TRUE(pool.update_lease(id, std::chrono::seconds(60)));
    EXPECT_GE(std::stoll(raw->string({"ZSCORE", "{pool}:timeout", bytes_of(id)})), epoch_ms() + 50000);
    pool.release(id);
}

// A holder killed with its permit: nobody releases it, and a waiter gets it
// when the lease ends.
TEST_F(ExpirableSemaphore, ADeadHoldersPermitComesBackAfterItsLease) {
    constexpr auto lease = std::chrono::milliseconds(1500);
    const auto taken = std::chrono::steady_clock::now();
    const std::string id = in_killed_process(config(), [&](Client& own) {
        PermitExpirableSemaphore pool(own, "pool");
        pool.try_set_permits(1);
        return pool.acquire(lease);
    });
    ASSERT_EQ(id.size(), 32u);
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");

    EXPECT_FALSE(pool.try_acquire());
    raw->command({"CONFIG", "RESETSTAT"});
    const auto got = pool.try_acquire_for(std::chrono::seconds(20));
    ASSERT_TRUE(got);
    const auto waited = std::chrono::steady_clock::now() - taken;
    EXPECT_LT(waited, lease + std::chrono::seconds(3));
    EXPECT_LE(script_calls(), 4);  // slept until the lease's end, then took it
    EXPECT_EQ(raw->integer({"ZCARD", "{pool}:timeout"}), 1);
    EXPECT_EQ(raw->string({"ZSCORE", "{pool}:timeout", bytes_of(id)}), "");
    pool.release(*got);
    EXPECT_TRUE(eventually([&] { return subscribers(channel) == 0; }));
}

TEST_F(ExpirableSemaphore, AReleaseWakesAWaiter) {
    Client holding(config()), waiting(config());
    PermitExpirableSemaphore held(holding, "pool"), wanted(waiting, "pool");
    held.try_set_permits(1);
    const std::string id = held.acquire();  // no lease: only the release can free it
    auto waiter = std::async(std::launch::async, [&] { return wanted.acquire(std::chrono::seconds(30)); });
    ASSERT_TRUE(eventually([&] { return subscribers(channel) == 1 && script_calls() >= 3; }));
    held.release(id);
    ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(is_permit_id(waiter.get()));
    EXPECT_EQ(raw->string({"GET", "pool"}), "0");
}

TEST_F(ExpirableSemaphore, AJavaPeersReleaseWakesHoldfastWaiters) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    pool.try_set_permits(1);
    // A Java holder's permit: its 16-byte id in the ZSET, never expiring.
    const std::string java_permit = bytes_of("00112233445566778899aabbccddeeff");
    raw->command({"DECR", "pool"});
    raw->command({"ZADD", "{pool}:timeout", "922337203685477", java_permit});
    auto waiter = std::async(std::launch::async, [&] { return pool.try_acquire_for(std::chrono::seconds(30)); });
    ASSERT_TRUE(eventually([&] { return subscribers(channel) == 1 && script_calls() >= 2; }));
    // What tryRelease does: remove the id, INCRBY, publish the number released.
    raw->command({"ZREM", "{pool}:timeout", java_permit});
    raw->command({"INCRBY", "pool", "1"});
    raw->command({"PUBLISH", channel, "1"});
    ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    const auto got = waiter.get();
    ASSERT_TRUE(got);
    // And a Java peer can release holdfast's permit by its id's bytes.
    EXPECT_EQ(raw->integer({"ZREM", "{pool}:timeout", bytes_of(*got)}), 1);
}

TEST_F(ExpirableSemaphore, PermitsNeverExceedTheCountUnderContention) {
    constexpr int permits = 2, threads = 6, rounds = 15;
    Client client(config());
    PermitExpirableSemaphore(client, "slots").try_set_permits(permits);
    std::atomic<int> inside{0}, most{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([&] {
            PermitExpirableSemaphore slots(client, "slots");
            for (int i = 0; i < rounds; ++i) {
                const std::string id = slots.acquire(std::chrono::seconds(30));
                const int now = ++inside;
                int seen = most.load();
                while (now > seen && !most.compare_exchange_weak(seen, now)) {
                }
                --inside;
                slots.release(id);
            }
        });
    for (auto& w : workers) w.join();
    EXPECT_LE(most.load(), permits);
    EXPECT_EQ(raw->string({"GET", "slots"}), std::to_string(permits));
    EXPECT_EQ(raw->integer({"EXISTS", "{slots}:timeout"}), 0);
}

TEST_F(ExpirableSemaphore, AsyncForms) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    pool.try_set_permits(1);
    const std::optional<std::string> taken = pool.async_acquire(std::chrono::seconds(30)).get();
    ASSERT_TRUE(taken);
    const std::string id = *taken;
    EXPECT_FALSE(pool.async_try_acquire(std::chrono::milliseconds(100)).get());
    auto next = pool.async_try_acquire(std::chrono::seconds(30));
    ASSERT_TRUE(eventually([&] { return subscribers(channel) == 1; }));
    std::async(std::launch::async, [&] { pool.async_release(id).get(); }).get();
    ASSERT_EQ(next.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(next.get());
}

TEST_F(ExpirableSemaphore, KeysOfAnotherKindAreNamed) {
    Client client(config());
    raw->command({"RPUSH", "queue", "job"});
    PermitExpirableSemaphore pool(client, "queue");
    try {
        pool.try_acquire();
        FAIL() << "acquired from a list";
    } catch (const WrongTypeError& e) {
        EXPECT_NE(std::string(e.what()).find("permit-expirable semaphore"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("list"), std::string::npos) << e.what();
    }
    EXPECT_THROW(pool.available_permits(), WrongTypeError);
    EXPECT_EQ(raw->integer({"LLEN", "queue"}), 1);
}

// A count overwritten with what is no count: the release is refused before
// any write, as every other semaphore script refuses it, and the permit stays
// held (it used to be dropped from the zset, then INCRBY failed).
TEST_F(ExpirableSemaphore, AReleaseOnACountThatIsNoCountChangesNothing) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    pool.try_set_permits(1);
    const std::string id = pool.acquire(std::chrono::minutes(1));
    raw->command({"SET", "pool", "many"});
    EXPECT_THROW(pool.release(id), WrongTypeError);
    EXPECT_EQ(raw->integer({"ZCARD", "{pool}:timeout"}), 1) << "the permit was dropped";
    EXPECT_EQ(raw->string({"GET", "pool"}), "many");
}

}  // namespace
}  // namespace holdfast::testing
