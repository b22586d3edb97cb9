// A SUBSCRIBE the server refuses (an ACL user without the channel) fails the
// waiters of that channel at once, naming the channel, instead of leaving
// them to sleep until their deadline.
#include <future>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"
#include "transport/subscriber.hpp"

namespace holdfast::testing {
namespace {

using namespace std::chrono_literals;

using Subscriptions = RedisTest;

// A user who may publish (the acquire checks it) but not SUBSCRIBE.
TEST_F(Subscriptions, RefusedChannelFailsTheWaiterNamingTheChannel) {
    raw->command({"ACL", "SETUSER", "waiter", "on", ">pw", "~*", "&*", "+@all", "-subscribe", "-ssubscribe"});
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
        EXPECT_EQ(e.code(), errc::no_permission) << why;
        EXPECT_EQ(e.reply_code(), "NOPERM");
        EXPECT_NE(why.find("SUBSCRIBE"), std::string::npos) << why;
        EXPECT_NE(why.find("redisson_lock__channel:{door}"), std::string::npos) << why;
        EXPECT_NE(why.find("NOPERM"), std::string::npos) << why;
        EXPECT_NE(why.find("ACL SETUSER waiter +subscribe"), std::string::npos) << why;  // the command, not a channel
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
    EXPECT_EQ(detail::core_of(waiter_client).transport.subscriber().channel_count(), 0u);

    // Nothing is left stuck: granted the command, the same client waits and is
    // woken by the unlock message, long before the 30 s lease would end.
    raw->command({"ACL", "SETUSER", "waiter", "+subscribe", "+ssubscribe"});
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

// What a listener heard, in order.
class Heard : public detail::ChannelListener {
public:
    void on_subscribed() override { said.push_back("subscribed"); }
    void on_message(std::string_view payload) override { said.emplace_back(payload); }
    void on_closed() override { said.push_back("closed"); }
    void on_refused(const detail::Failure&) override { said.push_back("refused"); }
    std::vector<std::string> said;
};

// The subscriber only delivers: every local listener of a channel hears each
// message as it came, over one SUBSCRIBE, whatever it means.
TEST_F(Subscriptions, EveryListenerHearsEveryMessageOverOneSubscription) {
    asio::io_context io;
    auto connection = std::make_shared<detail::Connection>(io, config());
    detail::Subscriber subscriber(io, connection, 1s);
    connection->start();
    // Single-threaded: the test runs the loop itself until `done`.
    const auto run_until = [&](const std::function<bool()>& done) {
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (!done() && std::chrono::steady_clock::now() < deadline) io.run_for(5ms);
        return done();
    };
    auto a = std::make_shared<Heard>();
    auto b = std::make_shared<Heard>();
    subscriber.add("news", a);
    subscriber.add("news", b);
    ASSERT_TRUE(run_until([&] { return a->said.size() == 1 && b->said.size() == 1; }));
    EXPECT_EQ(subscribers("news"), 1);
    EXPECT_TRUE(subscriber.active("news"));

    raw->command({"PUBLISH", "news", "1"});
    raw->command({"PUBLISH", "news", "anything"});
    ASSERT_TRUE(run_until([&] { return a->said.size() == 3 && b->said.size() == 3; }));
    EXPECT_EQ(a->said, (std::vector<std::string>{"subscribed", "1", "anything"}));
    EXPECT_EQ(b->said, a->said);

    subscriber.remove("news", a.get());
    raw->command({"PUBLISH", "news", "2"});
    ASSERT_TRUE(run_until([&] { return b->said.size() == 4; }));
    EXPECT_EQ(b->said.back(), "2");
    EXPECT_EQ(a->said.size(), 3u);
    EXPECT_TRUE(subscriber.active("news"));

    subscriber.stop_now();
    EXPECT_EQ(b->said.back(), "closed");
    EXPECT_FALSE(subscriber.active("news"));
    EXPECT_EQ(subscriber.channel_count(), 0u);
}

}  // namespace
}  // namespace holdfast::testing
