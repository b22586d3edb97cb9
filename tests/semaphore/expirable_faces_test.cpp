// holdfast::PermitExpirableSemaphore's faces beside taking one permit:
// several permits at once, list releases, lease queries, the counts,
// set_permits(), leases of any unit, and the future and callback forms.
#include <future>

#include "redis_fixture.hpp"
#include "redisson_semaphore.hpp"

namespace holdfast::testing {
namespace {

using ExpirableFaces = RedisTest;
using Duration = PermitExpirableSemaphore::Duration;

TEST_F(ExpirableFaces, SeveralPermitsAreTakenAllOrNone) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    ASSERT_TRUE(pool.try_set_permits(3));
    EXPECT_TRUE(pool.try_acquire(4).empty());
    EXPECT_EQ(pool.available_permits(), 3) << "none taken of a batch that did not fit";

    const std::vector<std::string> two = pool.acquire(2, 30s);
    ASSERT_EQ(two.size(), 2u);
    EXPECT_NE(two[0], two[1]);
    EXPECT_EQ(raw->integer({"ZCARD", "{pool}:timeout"}), 2);
    // One lease for the batch.
    EXPECT_EQ(raw->string({"ZSCORE", "{pool}:timeout", RedissonSemaphore::bytes_of(two[0])}),
              raw->string({"ZSCORE", "{pool}:timeout", RedissonSemaphore::bytes_of(two[1])}));
    EXPECT_TRUE(pool.try_acquire(2).empty());
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(pool.try_acquire_for(2, 300ms).empty());
    EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
    EXPECT_TRUE(pool.try_acquire_until(2, std::chrono::system_clock::now() - 1s).empty());
    EXPECT_EQ(pool.try_acquire(1).size(), 1u);
    EXPECT_EQ(pool.acquired_permits(), 3);
    EXPECT_EQ(pool.available_permits(), 0);
    EXPECT_EQ(pool.permits(), 3);

    expect_invalid_argument([&] { pool.try_acquire(0); }, "permits must be >= 1");
    expect_invalid_argument([&] { pool.try_acquire(-2); }, "permits must be >= 1");
}

TEST_F(ExpirableFaces, ABatchTakenWhileWaitingComesBackTogetherWhenItsLeaseEnds) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    ASSERT_TRUE(pool.try_set_permits(2));
    const std::vector<std::string> first = pool.try_acquire(2, 300ms);
    ASSERT_EQ(first.size(), 2u);
    // Nobody releases: the waiter wakes when the lease ends and takes both.
    const std::vector<std::string> next = pool.try_acquire_until(2, std::chrono::steady_clock::now() + 20s);
    ASSERT_EQ(next.size(), 2u);
    EXPECT_FALSE(pool.remaining_ttl(first[0]));
    EXPECT_EQ(pool.remaining_ttl(next[0]), Duration::max());
    EXPECT_FALSE(pool.try_release(first)) << "their lease ended";
    pool.release(next);
    EXPECT_EQ(pool.available_permits(), 2);
}

TEST_F(ExpirableFaces, AListIsReleasedWholeOrNotAtAll) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_sc:{pool}"});
    ASSERT_TRUE(pool.try_set_permits(4));
    listener.read_reply();  // the count set
    const std::vector<std::string> three = pool.try_acquire(3);
    const std::string other = *pool.try_acquire();
    ASSERT_TRUE(pool.try_release(other));
    EXPECT_EQ(std::string(listener.read_reply()->element[2]->str), "1");

    std::vector<std::string> mixed = three;
    mixed.push_back(other);  // released already
    EXPECT_FALSE(pool.try_release(mixed));
    try {
        pool.release(mixed);
        FAIL() << "released a list with a permit not held";
    } catch (const NotOwnerError& e) {
        EXPECT_NE(std::string(e.what()).find("none was released"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(other), std::string::npos) << e.what();
    }
    EXPECT_EQ(pool.acquired_permits(), 3);

    pool.release(three);
    EXPECT_EQ(std::string(listener.read_reply()->element[2]->str), "3");  // the number released
    EXPECT_EQ(pool.available_permits(), 4);
    EXPECT_EQ(raw->integer({"EXISTS", "{pool}:timeout"}), 0);

    expect_invalid_argument([&] { pool.release(std::vector<std::string>{}); }, "no permit ids");
    expect_invalid_argument([&] { pool.try_release({three[0], three[0]}); }, "given twice");
    expect_invalid_argument([&] { pool.try_release({three[0], "nope"}); }, "32 hex digits");
}

TEST_F(ExpirableFaces, RemainingTtlReadsTheLeaseWithoutWriting) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    ASSERT_TRUE(pool.try_set_permits(3));
    const std::string leased = *pool.try_acquire(std::chrono::minutes(1));
    const std::string forever = *pool.try_acquire();
    const std::string brief = *pool.try_acquire(200ms);
    const auto left = pool.remaining_ttl(leased);
    ASSERT_TRUE(left);
    EXPECT_GT(*left, 50s);
    EXPECT_LE(*left, 60s);
    EXPECT_EQ(pool.remaining_ttl(forever), Duration::max());
    ASSERT_TRUE(eventually([&] { return !pool.remaining_ttl(brief); }));
    EXPECT_EQ(raw->integer({"ZCARD", "{pool}:timeout"}), 3) << "a read: the ended lease is not returned by it";
    EXPECT_FALSE(pool.remaining_ttl(std::string(32, 'a')));
    ASSERT_TRUE(pool.update_lease(forever, std::chrono::hours(1)));
    EXPECT_GT(*pool.remaining_ttl(forever), std::chrono::minutes(59));
    EXPECT_EQ(pool.acquired_permits(), 2) << "the counts return it";
}

TEST_F(ExpirableFaces, SetPermitsMakesTheTotal) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_sc:{pool}"});
    pool.set_permits(3);  // no count yet
    EXPECT_EQ(std::string(listener.read_reply()->element[2]->str), "3");
    EXPECT_EQ(pool.permits(), 3);
    const std::vector<std::string> taken = pool.try_acquire(2);
    pool.set_permits(5);
    EXPECT_EQ(std::string(listener.read_reply()->element[2]->str), "3");  // the new free count
    EXPECT_EQ(pool.available_permits(), 3);
    EXPECT_EQ(pool.permits(), 5);
    pool.set_permits(1);
    EXPECT_EQ(pool.available_permits(), -1);
    EXPECT_TRUE(pool.try_acquire(1).empty());
    pool.release(taken);
    EXPECT_EQ(pool.available_permits(), 1);
    EXPECT_EQ(pool.permits(), 1);
    // A TTL on the count survives: set_permits moves it by INCRBY.
    PermitExpirableSemaphore brief(client, "brief");
    ASSERT_TRUE(brief.try_set_permits(1, std::chrono::minutes(2)));
    brief.set_permits(4);
    EXPECT_GT(raw->integer({"PTTL", "brief"}), 100000);
    expect_invalid_argument([&] { pool.set_permits(-1); }, "permits must be >= 0");
}

TEST_F(ExpirableFaces, LeasesOfAnyUnitAndStopTokens) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    ASSERT_TRUE(pool.try_set_permits(2));
    const std::string a = pool.acquire(std::chrono::seconds(30));
    const auto b = pool.try_acquire_for(1s, std::chrono::microseconds(1500));  // rounded up to 2 ms
    ASSERT_TRUE(b);
    EXPECT_LE(pool.remaining_ttl(a).value_or(Duration::zero()), 30s);
    pool.release(a);
    ASSERT_TRUE(eventually([&] { return pool.available_permits() == 2; }));

    ASSERT_EQ(pool.try_acquire(2).size(), 2u);
    const auto far = std::chrono::steady_clock::now() + 60s;
    auto stopped = [&](std::function<bool(std::stop_token)> wait) { expect_stop_ends("redisson_sc:{pool}", wait); };
    stopped([&](std::stop_token s) { return pool.acquire(s).has_value(); });
    stopped([&](std::stop_token s) { return pool.acquire(5s, s).has_value(); });
    stopped([&](std::stop_token s) { return pool.try_acquire_for(60s, 5s, s).has_value(); });
    stopped([&](std::stop_token s) { return pool.try_acquire_until(far, s).has_value(); });
    stopped([&](std::stop_token s) { return pool.try_acquire_until(far, 5s, s).has_value(); });
    stopped([&](std::stop_token s) { return !pool.acquire(2, s).empty(); });
    stopped([&](std::stop_token s) { return !pool.try_acquire_for(2, 60s, 5s, s).empty(); });
    EXPECT_EQ(pool.acquired_permits(), 2) << "a stopped wait took nothing";
}

TEST_F(ExpirableFaces, EveryCallHasAFutureAndACallbackForm) {
    Client client(config());
    PermitExpirableSemaphore pool(client, "pool");
    EXPECT_TRUE(pool.async_try_set_permits(4).get());
    pool.async_set_permits(5).get();
    pool.async_add_permits(-1).get();
    EXPECT_EQ(pool.async_available_permits().get(), 4);
    const std::vector<std::string> two = pool.async_try_acquire(2, Duration::zero(), 30s).get();
    ASSERT_EQ(two.size(), 2u);
    const std::vector<std::string> more = pool.async_acquire(1).get();
    ASSERT_EQ(more.size(), 1u);
    EXPECT_EQ(pool.async_acquired_permits().get(), 3);
    EXPECT_EQ(pool.async_permits().get(), 4);
    EXPECT_TRUE(pool.async_update_lease(more[0], 60s).get());
    EXPECT_GT(pool.async_remaining_ttl(more[0]).get().value_or(Duration::zero()), 50s);
    EXPECT_TRUE(pool.async_try_release(more[0]).get());
    EXPECT_FALSE(pool.async_try_release(more[0]).get());
    EXPECT_THROW(pool.async_release(more).get(), NotOwnerError);
    pool.async_release(two).get();
    EXPECT_FALSE(pool.async_try_release(two).get());

    Delivered<std::vector<std::string>> batch;
    pool.async_try_acquire(3, Duration::zero(), std::nullopt, {}, batch.done());
    const std::vector<std::string> three = batch.value();
    ASSERT_EQ(three.size(), 3u);
    Delivered<bool> moved, released;
    pool.async_update_lease(three[0], 10s, moved.done());
    EXPECT_TRUE(moved.value());
    Delivered<std::optional<Duration>> left;
    pool.async_remaining_ttl(three[0], left.done());
    EXPECT_LE(left.value().value_or(Duration::max()), 10s);
    Delivered<std::int64_t> taken, total;
    pool.async_acquired_permits(taken.done());
    EXPECT_EQ(taken.value(), 3);
    pool.async_permits(total.done());
    EXPECT_EQ(total.value(), 4);
    pool.async_try_release(three, released.done());
    EXPECT_TRUE(released.value());
    std::promise<std::exception_ptr> set;
    pool.async_set_permits(2, [&](std::exception_ptr e) { set.set_value(e); });
    EXPECT_EQ(set.get_future().get(), nullptr);
    EXPECT_EQ(pool.permits(), 2);
}

}  // namespace
}  // namespace holdfast::testing
