// A SUBSCRIBE the server refuses (an ACL user without the channel) fails the
// waiters of that channel at once, naming the channel, instead of leaving
// them to sleep until their deadline.
#include <future>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using namespace std::chrono_literals;

using Subscriptions = RedisTest;

TEST_F(Subscriptions, RefusedChannelFailsTheWaiterNamingTheChannel) {
    raw->command({"ACL", "SETUSER", "waiter", "on", ">pw", "~*", "resetchannels", "+@all"});
    Client holder(config());
    Lock held(holder, "door");
    held.lock();

    Config c = config();
    c.username = "waiter";
    c.password = "pw";
    Client waiter_client(c);
    Lock wanted(waiter_client, "door");
    const auto start = std::chrono::steady_clock::now();
    try {
        wanted.try_lock_for(20s);
        FAIL() << "waited without a channel";
    } catch (const ServerError& e) {
        const std::string why = e.what();
        EXPECT_NE(why.find("SUBSCRIBE"), std::string::npos) << why;
        EXPECT_NE(why.find("redisson_lock__channel:{door}"), std::string::npos) << why;
        EXPECT_NE(why.find("NOPERM"), std::string::npos) << why;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
    EXPECT_EQ(waiter_client.core().transport.subscriber().channel_count(), 0u);

    // Nothing is left stuck: granted the channel, the same client waits and is
    // woken by the unlock message, long before the 30 s lease would end.
    raw->command({"ACL", "SETUSER", "waiter", "allchannels"});
    auto waiter = std::async(std::launch::async, [&] {
        const bool got = wanted.try_lock_for(20s);
        if (got) wanted.unlock();
        return got;
    });
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{door}") == 1; }));
    held.unlock();
    ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(waiter.get());
}

}  // namespace
}  // namespace holdfast::testing
