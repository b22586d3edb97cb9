// holdfast::CountDownLatch: Redisson's layout and messages; reaching 0 wakes
// every waiter, in every client, and waiters sleep until then.
#include <future>
#include <thread>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

const std::string channel = "redisson_countdownlatch__channel__{gate}";

class Latch : public RedisTest {
protected:
    // `count` threads blocked in await() on `client`, each having read the
    // count twice (before and after subscribing).
    std::vector<std::future<void>> waiters(Client& client, int count) {
        const long long before = calls("get");
        std::vector<std::future<void>> futures;
        for (int i = 0; i < count; ++i)
            futures.push_back(std::async(std::launch::async, [&client] { CountDownLatch(client, "gate").await(); }));
        EXPECT_TRUE(eventually([&] { return calls("get") >= before + 2 * count; }));
        return futures;
    }
};

TEST_F(Latch, AStringCountAndRedissonsMessages) {
    Client client(config());
    CountDownLatch gate(client, "gate");
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", channel});
    auto next_message = [&] {
        auto message = listener.read_reply();
        EXPECT_EQ(std::string(message->element[1]->str), channel);
        return std::string(message->element[2]->str);
    };

    EXPECT_EQ(gate.count(), 0);
    ASSERT_TRUE(gate.try_set_count(2));
    EXPECT_EQ(next_message(), "1");  // a new count
    EXPECT_FALSE(gate.try_set_count(5));
    EXPECT_EQ(raw->string({"TYPE", "gate"}), "string");
    EXPECT_EQ(raw->string({"GET", "gate"}), "2");
    gate.count_down();
    EXPECT_EQ(raw->string({"GET", "gate"}), "1");
    EXPECT_EQ(gate.count(), 1);
    gate.count_down();
    EXPECT_EQ(next_message(), "0");  // reached 0
    EXPECT_EQ(raw->integer({"EXISTS", "gate"}), 0);
    gate.count_down();  // an open latch stays open, and leaves nothing
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
    EXPECT_EQ(gate.count(), 0);
    EXPECT_TRUE(gate.try_set_count(1));  // and can be set again
}

TEST_F(Latch, TheChannelAlwaysHasBracesAndNoColon) {
    Client client(config());
    CountDownLatch job(client, "{job}:7");
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_countdownlatch__channel__{{job}:7}"});
    job.try_set_count(1);
    EXPECT_EQ(std::string(listener.read_reply()->element[2]->str), "1");
    job.count_down();
    EXPECT_EQ(std::string(listener.read_reply()->element[2]->str), "0");
}

TEST_F(Latch, ReachingZeroWakesEveryWaiterInEveryClient) {
    Client a(config()), b(config()), counting(config());
    CountDownLatch gate(counting, "gate");
    gate.try_set_count(3);
    auto in_a = waiters(a, 4);
    auto in_b = waiters(b, 2);
    EXPECT_EQ(subscribers(channel), 2);  // one per client
    gate.count_down();
    gate.count_down();
    for (auto& f : in_a) EXPECT_EQ(f.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
    gate.count_down();
    for (auto* group : {&in_a, &in_b})
        for (auto& f : *group) {
            ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
            f.get();
        }
    EXPECT_TRUE(eventually([&] { return subscribers(channel) == 0; }));
    EXPECT_EQ(detail::core_of(a).transport.subscriber().channel_count(), 0u);
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(Latch, WaitersSleepUntilAMessage) {
    Client waiting(config()), counting(config());
    CountDownLatch gate(counting, "gate");
    gate.try_set_count(1);
    auto futures = waiters(waiting, 3);
    raw->command({"CONFIG", "RESETSTAT"});
    // Nothing but a message can open it: a polling waiter would read here.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_EQ(calls("get"), 0);
    gate.count_down();
    for (auto& f : futures) ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_LE(calls("get"), 3 * 2);  // one read each, two if woken mid-read
}

TEST_F(Latch, AwaitForTimesOutAndAnOpenLatchDoesNotWait) {
    Client client(config());
    CountDownLatch gate(client, "gate");
    EXPECT_TRUE(gate.await_for(std::chrono::seconds(5)));  // never set: open
    gate.await();
    EXPECT_EQ(calls("subscribe"), 0);
    gate.try_set_count(1);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(gate.await_for(std::chrono::milliseconds(300)));
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
    EXPECT_FALSE(gate.await_until(std::chrono::system_clock::now() - std::chrono::seconds(1)));
    EXPECT_TRUE(eventually([&] { return subscribers(channel) == 0; }));
    EXPECT_EQ(detail::core_of(client).transport.subscriber().channel_count(), 0u);
}

TEST_F(Latch, AJavaPeersCountDownWakesHoldfastWaiters) {
    Client client(config());
    CountDownLatch gate(client, "gate");
    gate.try_set_count(1);
    auto futures = waiters(client, 2);
    // What RCountDownLatch.countDown() does at 1: DECR, DEL at 0, publish 0.
    EXPECT_EQ(raw->integer({"DECR", "gate"}), 0);
    raw->command({"DEL", "gate"});
    raw->command({"PUBLISH", channel, "0"});
    for (auto& f : futures) ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

TEST_F(Latch, AJavaPeersDeleteOpensTheLatchForHoldfastWaiters) {
    Client client(config());
    CountDownLatch gate(client, "gate");
    gate.try_set_count(5);
    auto futures = waiters(client, 2);
    // RCountDownLatch.delete(): DEL, publish 1. The count is gone: 0.
    raw->command({"DEL", "gate"});
    raw->command({"PUBLISH", channel, "1"});
    for (auto& f : futures) ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

TEST_F(Latch, AsyncForms) {
    Client client(config());
    CountDownLatch gate(client, "gate");
    gate.try_set_count(2);
    auto opened = gate.async_await();
    EXPECT_FALSE(gate.async_await_for(std::chrono::milliseconds(100)).get());
    gate.async_count_down().get();
    std::async(std::launch::async, [&] { gate.async_count_down().get(); }).get();
    ASSERT_EQ(opened.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    opened.get();
    EXPECT_TRUE(gate.async_await_for(std::chrono::milliseconds(0)).get());
}

TEST_F(Latch, BadArgumentsAndKeysOfAnotherKind) {
    Client client(config());
    EXPECT_THROW(CountDownLatch(client, ""), std::invalid_argument);
    CountDownLatch gate(client, "gate");
    try {
        gate.try_set_count(0);
        FAIL() << "set a count of 0";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("count"), std::string::npos) << e.what();
    }
    EXPECT_THROW(gate.try_set_count(-1), std::invalid_argument);
    EXPECT_THROW(gate.await_for(std::chrono::milliseconds(-1)), std::invalid_argument);
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);

    raw->command({"SADD", "members", "ada"});
    CountDownLatch set(client, "members");
    try {
        set.await_for(std::chrono::milliseconds(200));
        FAIL() << "awaited a set";
    } catch (const WrongTypeError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("'members'"), std::string::npos) << what;
        EXPECT_NE(what.find("count-down latch"), std::string::npos) << what;
        EXPECT_NE(what.find("set"), std::string::npos) << what;
    }
    EXPECT_THROW(set.count(), WrongTypeError);
    EXPECT_THROW(set.count_down(), WrongTypeError);
    EXPECT_THROW(set.try_set_count(3), WrongTypeError);  // not "a count exists"

    raw->command({"SET", "word", "hello"});
    CountDownLatch word(client, "word");
    EXPECT_THROW(word.count(), WrongTypeError);
    EXPECT_THROW(word.await(), WrongTypeError);
    EXPECT_THROW(word.count_down(), WrongTypeError);
    EXPECT_THROW(word.try_set_count(3), WrongTypeError);
    EXPECT_EQ(raw->string({"GET", "word"}), "hello");
    EXPECT_EQ(detail::core_of(client).transport.subscriber().channel_count(), 0u);
}

TEST_F(Latch, AStoppedFutureWaitEndsFalse) {
    Client client(config());
    CountDownLatch gate(client, "gate");
    gate.try_set_count(1);
    std::stop_source stop, stop_for;
    auto waiting = gate.async_await(stop.get_token());
    auto waiting_for = gate.async_await_for(std::chrono::seconds(60), stop_for.get_token());
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_countdownlatch__channel__{gate}") == 1; }));
    stop.request_stop();
    stop_for.request_stop();
    ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    ASSERT_EQ(waiting_for.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_FALSE(waiting.get());
    EXPECT_FALSE(waiting_for.get());
    EXPECT_EQ(gate.count(), 1);
    gate.count_down();
    EXPECT_TRUE(gate.async_await().get());
}

}  // namespace
}  // namespace holdfast::testing
