// Destroying a Client fails every waiter of every kind, promptly: none is
// left parked until its deadline (docs/design.md, "Waiting").
#include <functional>
#include <future>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using namespace std::chrono_literals;

struct Kind {
    const char* name;
    /// Makes `name` unavailable, on the holder's client.
    std::function<void(Client& holder)> occupy;
    /// Waits up to 20 s on the waiter's client; whatever it returns does not matter.
    std::function<void(Client& waiter)> wait;
    /// Set: the waiter waits once this channel has a subscriber, not at its
    /// first refusal. A MultiLock's thread goes on after a refused round (it
    /// gives back what it took, then waits for the refused lock), calling
    /// into the Client: destroying it then is not destroying it under a waiter.
    const char* waits_on_channel = nullptr;
};

std::ostream& operator<<(std::ostream& out, const Kind& kind) { return out << kind.name; }

const Kind kinds[] = {
    {"Lock", [](Client& c) { Lock(c, "door").lock(); }, [](Client& c) { Lock(c, "door").try_lock_for(20s); }},
    {"FairLock", [](Client& c) { FairLock(c, "door").lock(); },
     [](Client& c) { FairLock(c, "door").try_lock_for(20s); }},
    {"SpinLock", [](Client& c) { SpinLock(c, "door").lock(); },
     [](Client& c) { SpinLock(c, "door").try_lock_for(20s); }},
    {"SimpleLock", [](Client& c) { SimpleLock(c, "door").lock(); },
     [](Client& c) { SimpleLock(c, "door").try_lock_for(20s); }},
    {"FencedLock", [](Client& c) { FencedLock(c, "door").lock(); },
     [](Client& c) { FencedLock(c, "door").try_lock_for(20s); }},
    {"WriteLock", [](Client& c) { ReadWriteLock(c, "door").read_lock().lock(); },
     [](Client& c) { ReadWriteLock(c, "door").write_lock().try_lock_for(20s); }},
    {"ReadLock", [](Client& c) { ReadWriteLock(c, "door").write_lock().lock(); },
     [](Client& c) { ReadWriteLock(c, "door").read_lock().try_lock_for(20s); }},
    {"MultiLock", [](Client& c) { Lock(c, "door").lock(); },
     [](Client& c) {
         Lock a(c, "hall"), b(c, "door");
         MultiLock(a, b).try_lock_for(20s);
     },
     "redisson_lock__channel:{door}"},
    {"Semaphore", [](Client& c) { Semaphore(c, "door").try_set_permits(0); },
     [](Client& c) { Semaphore(c, "door").try_acquire_for(20s); }},
    {"PermitExpirableSemaphore", [](Client& c) { PermitExpirableSemaphore(c, "door").try_set_permits(0); },
     [](Client& c) { PermitExpirableSemaphore(c, "door").try_acquire_for(20s); }},
    {"CountDownLatch", [](Client& c) { CountDownLatch(c, "door").try_set_count(1); },
     [](Client& c) { CountDownLatch(c, "door").await_for(20s); }},
};

class Shutdown : public RedisTest, public ::testing::WithParamInterface<Kind> {};

TEST_P(Shutdown, DestroyingTheClientFailsItsWaiterAtOnce) {
    const Kind& kind = GetParam();
    Client holder(config());
    kind.occupy(holder);
    cache_scripts();
    raw->command({"CONFIG", "RESETSTAT"});
    auto waiter_client = std::make_unique<Client>(config());
    auto waiter = wait_until_closed([&] { kind.wait(*waiter_client); });
    // Refused at least once: the waiter is waiting (or about to try again).
    ASSERT_TRUE(eventually([&] {
        return kind.waits_on_channel ? subscribers(kind.waits_on_channel) >= 1 : script_calls() + calls("get") >= 1;
    }));
    const auto closing = std::chrono::steady_clock::now();
    waiter_client.reset();
    ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready) << kind.name << ": the waiter is still parked";
    EXPECT_LT(std::chrono::steady_clock::now() - closing, 5s);
    const std::string why = waiter.get();
    EXPECT_NE(why.find("shutting down"), std::string::npos) << why;
    EXPECT_NE(why.find("'door'"), std::string::npos) << "names what it waited for: " << why;
}

INSTANTIATE_TEST_SUITE_P(EveryKind, Shutdown, ::testing::ValuesIn(kinds),
                         [](const auto& info) { return std::string(info.param.name); });

// A fair waiter whose Client is destroyed leaves its queue on the way out,
// even on a server that has never run the give-up script: it goes as EVAL,
// since no NOSCRIPT retry could follow a connection being closed. With a
// dead-waiter timeout of a minute, nothing else would take it out soon.
class FairShutdown : public RedisTest {
protected:
    // DEBUG SLEEP keeps the server busy (AWaiterLeavesTheQueueWhileAReplyIsDue).
    std::vector<std::string> server_args() override { return {"--enable-debug-command", "yes"}; }
    // `before_shutdown` runs on the waiter's client once its waiter is queued.
    void expect_the_waiter_leaves(const std::function<void(Client&)>& before_shutdown) {
        Client holder(config());
        FairLock held(holder, "line");
        held.lock();
        auto waiter_client = std::make_unique<Client>(config());
        FairLock wanted(*waiter_client, "line", std::chrono::minutes(1));
        auto waiter = wait_until_closed([&] { wanted.lock(); });
        ASSERT_TRUE(eventually([&] { return raw->integer({"LLEN", "redisson_lock_queue:{line}"}) == 1; }));
        before_shutdown(*waiter_client);
        waiter_client.reset();
        EXPECT_NE(waiter.get().find("shutting down"), std::string::npos);
        EXPECT_TRUE(eventually([&] { return raw->integer({"LLEN", "redisson_lock_queue:{line}"}) == 0; }, 20s))
            << "the destroyed client's waiter is still queued";
        EXPECT_EQ(raw->integer({"ZCARD", "redisson_lock_timeout:{line}"}), 0);
        held.unlock();
    }
};

TEST_F(FairShutdown, AWaiterLeavesTheQueueWhenTheScriptWasNeverLoaded) {
    expect_the_waiter_leaves([&](Client&) { raw->command({"SCRIPT", "FLUSH"}); });
}

// The same while a reply is due on the waiter's connection (here DEBUG
// SLEEP keeps the server busy for 2 s; not a script looping on TIME, which
// Redis 7.2 and later freeze for the whole script): the give-up, queued
// behind it, is sent before the connection closes, not dropped with the queue.
TEST_F(FairShutdown, AWaiterLeavesTheQueueWhileAReplyIsDue) {
    std::promise<std::string> slept;
    expect_the_waiter_leaves([&](Client& client) {
        // Routed by "line", as the give-up script is: on its connection.
        detail::core_of(client).transport.execute(
            "line", {"DEBUG", "SLEEP", "2"}, [&](detail::Failure error, detail::Reply reply) {
                slept.set_value(error ? error.message() : reply.is_error() ? reply.str : "slept");
            });
    });
    // The sleep itself ran (refused, or cut off by the close, it proves nothing).
    auto answer = slept.get_future();
    ASSERT_EQ(answer.wait_for(10s), std::future_status::ready);
    const std::string said = answer.get();
    EXPECT_TRUE(said == "slept" || said.find("shutting down") != std::string::npos) << said;
}

}  // namespace
}  // namespace holdfast::testing
