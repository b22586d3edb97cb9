// Targeted wake-ups (lock/handoff.lua.part): a release names the first listed
// holdfast waiter just before Redisson's `0` and promises it the free lock;
// the other waiters sleep on, and a Redisson peer is woken as ever.
#include <algorithm>
#include <future>
#include <memory>
#include <stop_token>
#include <vector>

#include "door_keys.hpp"
#include "redis_fixture.hpp"
#include "redisson_peer.hpp"

namespace holdfast::testing {
namespace {

const std::string waiters = "holdfast_lock_waiters:{door}";
const std::string promise = "holdfast_lock_handoff:{door}";

class Handoffs : public RedisTest {
protected:
    long long listed() const { return raw->integer({"ZCARD", waiters}); }
    std::vector<std::string> listed_ids() const {
        std::vector<std::string> ids;
        auto reply = raw->command({"ZRANGE", waiters, "0", "-1"});
        for (std::size_t i = 0; i < reply->elements; ++i) ids.emplace_back(reply->element[i]->str);
        return ids;
    }
    static std::string next_message(support::SyncRedis& listener) {
        auto message = listener.read_reply();
        if (message->elements != 3) return "<not a message>";
        return message->element[2]->str;
    }
    /// A waiter on "door" in a client of its own, as in a process of its own.
    struct Waiter {
        explicit Waiter(const Config& c) : client(c), lock(client, "door"), owner(client.new_owner()) {}
        Client client;
        Lock lock;
        std::string owner;
        std::string id;  // as listed
        std::stop_source stop;
        std::future<bool> taken;
        void wait() { taken = lock.async_lock(owner, std::nullopt, stop.get_token()); }
        bool has_it() const { return taken.wait_for(0s) == std::future_status::ready; }
    };
    /// A client whose listed waiters check `check` after a handoff elsewhere.
    Config checking_after(std::chrono::milliseconds check) const {
        Config c = config();
        c.lock_handoff_check = check;
        return c;
    }
    /// `count` waiters, each listed and asleep before the next comes.
    std::vector<std::unique_ptr<Waiter>> waiting(int count, std::chrono::milliseconds check = 1s) {
        std::vector<std::unique_ptr<Waiter>> all;
        for (int i = 0; i < count; ++i) {
            raw->command({"CONFIG", "RESETSTAT"});
            all.push_back(std::make_unique<Waiter>(checking_after(check)));
            all.back()->wait();
            EXPECT_TRUE(eventually([&] { return listed() == i + 1; }));
            // Refused, subscribed, refused again: asleep.
            EXPECT_TRUE(eventually([&] { return script_calls() >= 2; }));
            for (const std::string& id : listed_ids())
                if (std::none_of(all.begin(), all.end(), [&](const auto& w) { return w->id == id; })) all.back()->id = id;
        }
        raw->command({"CONFIG", "RESETSTAT"});
        return all;
    }
};

TEST_F(Handoffs, AReleaseWakesTheFirstListedWaiterAloneAndTheRestInTurn) {
    cache_scripts();  // one call per script run
    Client holder(config());
    Lock held(holder, "door");
    held.lock();
    // Checks a minute after a handoff elsewhere: within the test, every attempt is a named one.
    auto all = waiting(4, 60s);
    const auto order = listed_ids();
    ASSERT_EQ(order.size(), 4u);
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", channel});

    held.unlock();
    for (std::size_t turn = 0; turn < all.size(); ++turn) {
        // Named first, then Redisson's `0`.
        EXPECT_EQ(next_message(listener), order[turn]);
        EXPECT_EQ(next_message(listener), "0");
        Waiter* winner = nullptr;
        ASSERT_TRUE(eventually([&] {
            for (auto& w : all)
                if (w->taken.valid() && w->has_it()) winner = w.get();
            return winner != nullptr;
        }));
        EXPECT_EQ(winner->id, order[turn]);
        EXPECT_TRUE(winner->taken.get());
        EXPECT_EQ(raw->integer({"EXISTS", promise}), 0);  // kept: taken
        EXPECT_EQ(listed_ids(), std::vector<std::string>(order.begin() + turn + 1, order.end()));
        winner->lock.async_release(winner->owner).get();
    }
    EXPECT_EQ(next_message(listener), "0");  // the last release: nobody listed
    // Each turn: a release and the named waiter's one attempt. Nobody else tried.
    EXPECT_EQ(script_calls(), 2 * 4 + 1);
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

// A waiter named and gone before it came: its promise keeps holdfast's
// callers off the free lock for its grace, not Redisson's, who do not know it.
TEST_F(Handoffs, APromiseHoldsOffHoldfastCallersOnlyUntilItEnds) {
    raw->command({"SET", promise, "16777216", "PX", "60000"});
    Client client(config());
    Lock lock(client, "door");
    EXPECT_FALSE(lock.try_lock());
    EXPECT_EQ(raw->command({"EVAL", redisson_acquire, "1", "door", "30000", java_owner})->type, REDIS_REPLY_NIL);
    raw->command({"DEL", "door"});
    raw->command({"PEXPIRE", promise, "300"});
    EXPECT_TRUE(lock.try_lock_for(10s));
    lock.unlock();
}

// The one named died with its promise: the others were told of the handoff
// and check once, Config::lock_handoff_check later, and one takes the lock.
TEST_F(Handoffs, AWaiterNamedThatNeverComesDelaysTheOthersByACheckOnly) {
    Client holder(config());
    Lock held(holder, "door");
    held.lock();
    auto all = waiting(2, 300ms);
    raw->command({"ZADD", waiters, "0", "16777216"});  // a dead process's waiter, first in line
    const auto released = std::chrono::steady_clock::now();
    held.unlock();
    Waiter* winner = nullptr;
    ASSERT_TRUE(eventually([&] {
        for (auto& w : all)
            if (w->has_it()) winner = w.get();
        return winner != nullptr;
    }, 10s));
    // The holder's 30 s lease did not bound this wait: the check did.
    EXPECT_LT(std::chrono::steady_clock::now() - released, 5s);
    EXPECT_TRUE(winner->taken.get());
    EXPECT_EQ(listed(), 1);  // the dead one went with its promise; the other waits on
    winner->lock.async_release(winner->owner).get();
    for (auto& w : all)
        if (w.get() != winner) {
            EXPECT_TRUE(w->taken.get());
        }
}

// A waiter of this client named but gone (its give-up lost with a failover,
// say): the client that gave the id out passes its promise on at once, long
// before anyone's check.
TEST_F(Handoffs, AClientPassesOnThePromiseOfAWaiterOfItsOwnThatIsGone) {
    Client holder(config());
    Lock held(holder, "door");
    held.lock();
    auto all = waiting(2, 60s);
    const std::string gone = std::to_string(std::stoull(all[0]->id) + 1000);  // given out by the same client
    raw->command({"ZADD", waiters, "0", gone});
    held.unlock();
    ASSERT_TRUE(eventually([&] { return all[0]->has_it() || all[1]->has_it(); }, 10s));
    EXPECT_EQ(raw->command({"ZSCORE", waiters, gone})->type, REDIS_REPLY_NIL);
    for (auto& w : all) {
        EXPECT_TRUE(w->taken.get());
        w->lock.async_release(w->owner).get();
    }
}

// A waiter that stops while the free lock is promised to it passes the
// promise to the next listed waiter (lock/leave.lua).
TEST_F(Handoffs, AWaiterThatStopsPassesItsPromiseOn) {
    Client holder(config());
    Lock held(holder, "door");
    held.lock();
    auto all = waiting(2);
    Waiter &first = *all[0], &second = *all[1];
    raw->command({"ZADD", waiters, "XX", "1", first.id, "2", second.id});
    // As a release leaves it, bar the message: free, and promised to the first.
    raw->command({"DEL", "door"});
    raw->command({"SET", promise, first.id, "PX", "60000"});
    raw->command({"ZREM", waiters, first.id});
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", channel});
    first.stop.request_stop();
    EXPECT_FALSE(first.taken.get());
    EXPECT_EQ(next_message(listener), second.id);
    EXPECT_EQ(next_message(listener), "0");
    ASSERT_EQ(second.taken.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(second.taken.get());
    EXPECT_EQ(raw->integer({"EXISTS", promise}), 0);
    EXPECT_EQ(listed(), 0);
    second.lock.async_release(second.owner).get();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

// A Redisson peer's release publishes a bare `0`: a listed waiter wakes on it.
TEST_F(Handoffs, ARedissonReleaseWakesAListedWaiter) {
    ASSERT_EQ(raw->command({"EVAL", redisson_acquire, "1", "door", "30000", java_owner})->type, REDIS_REPLY_NIL);
    auto all = waiting(1);
    raw->command({"EVAL", redisson_release, "3", "door", channel,
                  "redisson_unlock_latch:{door}:0123456789abcdef0123456789abcdef", "0", "30000", java_owner, "publish",
                  "13000"});
    ASSERT_EQ(all[0]->taken.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(all[0]->taken.get());
    EXPECT_EQ(listed(), 0);
}

// A name with braces of its own keeps its side keys apart from the plain
// name's: `{door}` and `door` share Redisson's channel, not a promise.
TEST_F(Handoffs, ANameWithBracesHasSideKeysOfItsOwn) {
    Client holder(config()), other(config());
    Lock held(holder, "{door}"), wanted(other, "{door}");
    held.lock();
    auto waiting = wanted.async_lock(other.new_owner());
    ASSERT_TRUE(eventually([&] { return raw->integer({"ZCARD", "holdfast_lock_waiters::{door}"}) == 1; }));
    EXPECT_EQ(listed(), 0);
    held.unlock();
    ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(waiting.get());
}

// A lock's derived names are built in the step's frame up to about 60
// characters of name, on the heap past that: a long name is listed, named
// and handed over the same way.
TEST_F(Handoffs, ALongNameIsHandedOverAsAShortOne) {
    const std::string name = "orders:" + std::string(300, 'n');
    Client holder(config()), other(config());
    Lock held(holder, name), wanted(other, name);
    held.lock();
    auto waiting = wanted.async_lock(other.new_owner());
    ASSERT_TRUE(eventually([&] { return raw->integer({"ZCARD", "holdfast_lock_waiters:{" + name + "}"}) == 1; }));
    held.unlock();
    ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(waiting.get());
    EXPECT_EQ(raw->integer({"ZCARD", "holdfast_lock_waiters:{" + name + "}"}), 0);
}

}  // namespace
}  // namespace holdfast::testing
