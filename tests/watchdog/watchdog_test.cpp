// The watchdog keeps renewing through server errors, and stops when released.
#include <thread>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using Watchdog = RedisTest;

// With its script commands revoked by ACL, the client's renewals get NOPERM.
// That is an error, not a verdict: the hold stays, and renewal resumes.
TEST_F(Watchdog, ServerErrorsKeepRenewalScheduled) {
    raw->command({"ACL", "SETUSER", "holder", "on", ">pw", "~*", "&*", "+@all"});
    Config c = config();
    c.username = "holder";
    c.password = "pw";
    c.lock_watchdog_timeout = std::chrono::milliseconds(3000);
    Client client(c);
    Lock lock(client, "sturdy");
    lock.lock();
    auto lost = lock.lease_lost_token();
    raw->command({"CONFIG", "RESETSTAT"});
    raw->command({"ACL", "SETUSER", "holder", "-evalsha", "-eval"});
    // A renewal (every 1 s) is refused.
    ASSERT_TRUE(eventually([&] { return errors("NOPERM") >= 1; }));
    raw->command({"ACL", "SETUSER", "holder", "+@all"});
    // The next tick renews the lease back to ~3 s.
    EXPECT_TRUE(eventually([&] { return raw->integer({"PTTL", "sturdy"}) > 2500; }, std::chrono::seconds(5)));
    EXPECT_FALSE(lost.stop_requested());
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 1u);
    lock.unlock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
}

TEST_F(Watchdog, ReentrantHoldsRenewUntilTheLastUnlock) {
    Config c = config();
    c.lock_watchdog_timeout = std::chrono::milliseconds(1500);
    Client client(c);
    Lock lock(client, "deep");
    lock.lock();
    lock.lock();
    lock.unlock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 1u);
    // Still renewed with one hold left: alive after more than a lease.
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    EXPECT_EQ(raw->string({"HGET", "deep", client.current_owner()}), "1");
    lock.unlock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
    EXPECT_EQ(raw->integer({"EXISTS", "deep"}), 0);
}

}  // namespace
}  // namespace holdfast::testing
