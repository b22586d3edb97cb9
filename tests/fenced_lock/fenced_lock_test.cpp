// The fenced lock: RLock plus a token counter that rises with every grant,
// and the guarded resource from docs/fenced_lock.md turning a late writer away.
#include <fstream>
#include <future>
#include <sstream>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using Fencing = RedisTest;

const std::string counter = "redisson_lock_token:{ledger}";

TEST_F(Fencing, TokensRiseWithEveryAcquisitionIncludingReentry) {
    Client client(config());
    FencedLock lock(client, "ledger");
    EXPECT_EQ(lock.token(), 0);
    const std::int64_t first = lock.lock_and_get_token();
    const std::int64_t reentry = lock.lock_and_get_token();
    EXPECT_GT(first, 0);
    EXPECT_GT(reentry, first);
    EXPECT_EQ(raw->string({"HGET", "ledger", client.current_owner()}), "2");
    lock.unlock();
    lock.unlock();
    const auto again = lock.try_lock_and_get_token();
    ASSERT_TRUE(again.has_value());
    EXPECT_GT(*again, reentry);
    EXPECT_EQ(raw->string({"GET", counter}), std::to_string(*again));
    EXPECT_EQ(lock.token(), *again);
    lock.unlock();
    // The counter outlives the lock: tokens never repeat.
    EXPECT_EQ(raw->integer({"EXISTS", "ledger"}), 0);
    EXPECT_EQ(raw->integer({"TTL", counter}), -1);
}

TEST_F(Fencing, ARefusedTryRaisesNoTokenAndAWaiterGetsTheNext) {
    Client a(config()), b(config());
    FencedLock held(a, "ledger"), wanted(b, "ledger");
    const std::int64_t first = held.lock_and_get_token();
    EXPECT_EQ(wanted.try_lock_and_get_token(), std::nullopt);
    EXPECT_EQ(wanted.token(), first);
    auto waiter = wanted.async_try_lock_and_get_token(b.new_owner(), std::chrono::seconds(30));
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{ledger}") == 1; }));
    held.unlock();
    ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_GT(waiter.get(), first);
}

TEST_F(Fencing, AJavaPeersTokenCountsToo) {
    Client client(config());
    FencedLock lock(client, "ledger");
    raw->command({"SET", counter, "41"});  // what RFencedLock left behind
    EXPECT_GT(lock.lock_and_get_token(), 41);
    lock.unlock();
    // A counter ahead of the server's clock goes on by one, exactly (below
    // 2^53, where Lua's numbers, doubles, still count in ones).
    raw->command({"SET", counter, "8000000000000041"});
    EXPECT_EQ(lock.lock_and_get_token(), 8000000000000042);
    lock.unlock();
    EXPECT_EQ(raw->string({"GET", counter}), "8000000000000042");
}

// The server's clock in microseconds, as TIME gives it.
std::int64_t server_time_us(support::SyncRedis& redis) {
    auto time = redis.command({"TIME"});
    return std::stoll(std::string(time->element[0]->str, time->element[0]->len)) * 1'000'000 +
           std::stoll(std::string(time->element[1]->str, time->element[1]->len));
}

// A failover to a replica that had not received the latest token, or a
// restart without persistence, loses the counter: the next token must still
// be above every token handed out before (docs/design.md, "Fencing tokens").
TEST_F(Fencing, TokensNeverGoBackWhenTheCounterIsLost) {
    Client client(config());
    FencedLock lock(client, "ledger");
    const std::int64_t before = server_time_us(*raw);
    const std::int64_t first = lock.lock_and_get_token();
    EXPECT_GE(first, before);  // never below the server's clock
    lock.unlock();
    raw->command({"DEL", counter});  // the write a failover lost
    const std::int64_t second = lock.lock_and_get_token();
    EXPECT_GT(second, first);
    lock.unlock();
}

std::string example_resource() {
    std::ifstream file(std::string(HOLDFAST_EXAMPLES_DIR) + "/fenced_resource.lua");
    std::stringstream body;
    body << file.rdbuf();
    return body.str();
}

// The paused holder: its lease ends, another takes the lock and writes; the
// first then wakes up and writes with its old token. The resource refuses it.
TEST_F(Fencing, TheResourceRefusesAHolderWhoseLeaseRanOut) {
    const std::string resource = example_resource();
    ASSERT_FALSE(resource.empty());
    Client a(config()), b(config());
    FencedLock slow(a, "ledger"), fast(b, "ledger");
    const std::int64_t stale = slow.lock_and_get_token(std::chrono::milliseconds(100));
    std::optional<std::int64_t> fresh;
    ASSERT_TRUE(eventually([&] { return (fresh = fast.try_lock_and_get_token()).has_value(); }));
    auto write = [&](std::int64_t token, const std::string& value) {
        return raw->integer({"EVAL", resource, "2", "balance", "balance:token", std::to_string(token), value});
    };
    EXPECT_EQ(write(*fresh, "from fast"), 1);
    EXPECT_EQ(write(stale, "from slow"), 0);
    EXPECT_EQ(raw->string({"GET", "balance"}), "from fast");
    EXPECT_THROW(slow.release(), NotOwnerError);
    fast.unlock();
}

TEST_F(Fencing, ACounterThatIsNotATokenIsNamed) {
    Client client(config());
    FencedLock lock(client, "ledger");
    raw->command({"SET", counter, "not a number"});
    EXPECT_THROW(lock.token(), WrongTypeError);
    EXPECT_THROW(lock.lock_and_get_token(), ServerError);
    EXPECT_EQ(raw->integer({"EXISTS", "ledger"}), 0);  // the script failed before taking the lock
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
}

// Durations of any unit, as every other wait; the futures say when nothing
// was taken, as the callback forms do.
TEST_F(Fencing, AnyUnitAndFuturesThatMayTakeNothing) {
    using namespace std::chrono;
    Client client(config()), other(config());
    FencedLock lock(client, "ledger"), theirs(other, "ledger");
    const auto first = lock.try_lock_and_get_token(microseconds(1500), minutes(1));
    ASSERT_TRUE(first);
    EXPECT_GT(raw->integer({"PTTL", "ledger"}), 55000);
    lock.unlock();
    theirs.lock();
    EXPECT_FALSE(lock.try_lock_and_get_token(microseconds(200'500)));
    std::stop_source stop;
    auto waiting = lock.async_lock_and_get_token(client.new_owner(), std::nullopt, stop.get_token());
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{ledger}") == 1; }));
    stop.request_stop();
    ASSERT_EQ(waiting.wait_for(seconds(10)), std::future_status::ready);
    EXPECT_EQ(waiting.get(), std::nullopt);
    theirs.unlock();
    const std::string owner = client.new_owner();
    const auto token = lock.async_lock_and_get_token(owner).get();
    ASSERT_TRUE(token);
    EXPECT_GT(*token, *first);
    lock.async_release(owner).get();
}

}  // namespace
}  // namespace holdfast::testing
