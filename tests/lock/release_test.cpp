// Releasing as BasicLockable asks: unlock() throws nothing, whatever became
// of the hold; what went wrong is reported (an event, a metric, the
// lease-lost token) and release(), the checked form, throws it. A release
// that was tried ends the hold's renewal, unless the owner still holds the
// lock reentrantly.
#include <future>
#include <mutex>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

class Releasing : public RedisTest {
protected:
    Config told() {
        Config c = config();
        c.on_event = [this](const Event& event) {
            std::lock_guard lock(mutex_);
            events_.push_back(event);
        };
        return c;
    }
    std::vector<Event> events(Event::Kind kind) {
        std::lock_guard lock(mutex_);
        std::vector<Event> of_kind;
        for (const Event& event : events_)
            if (event.kind == kind) of_kind.push_back(event);
        return of_kind;
    }

private:
    std::mutex mutex_;
    std::vector<Event> events_;
};

// The README's pattern, with an operator's force-unlock in the middle: the
// guard's unlock finds nothing to release, and says so without terminating.
TEST_F(Releasing, ALockGuardOutlivesAForceUnlock) {
    Client client(told()), operator_client(config());
    Lock lock(client, "report");
    std::stop_token lost;
    {
        std::lock_guard guard(lock);
        lost = lock.lease_lost_token();
        EXPECT_TRUE(Lock(operator_client, "report").force_unlock());
    }
    EXPECT_TRUE(lost.stop_requested()) << "the holder was not told its hold is gone";
    const auto failed = events(Event::Kind::release_failed);
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_EQ(failed[0].primitive, "lock");
    EXPECT_EQ(failed[0].name, "report");
    EXPECT_EQ(failed[0].owner, client.current_owner());
    EXPECT_NE(failed[0].detail.find("not held"), std::string::npos) << failed[0].detail;
    EXPECT_EQ(client.metrics().primitives["lock"].release_failures, 1u);
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
    EXPECT_EQ(detail::core_of(client).holds.size(), 0u);
}

TEST_F(Releasing, AScopedLockOutlivesALostMember) {
    Client client(told()), operator_client(config());
    Lock first(client, "first"), second(client, "second");
    {
        std::scoped_lock both(first, second);
        EXPECT_TRUE(Lock(operator_client, "second").force_unlock());
    }
    EXPECT_FALSE(first.is_locked());
    EXPECT_EQ(events(Event::Kind::release_failed).size(), 1u);
}

// release() and async_release() deliver what unlock() only reports.
TEST_F(Releasing, TheCheckedFormsThrowWhatUnlockReports) {
    Client client(told()), operator_client(config());
    Lock lock(client, "report");
    lock.lock();
    Lock(operator_client, "report").force_unlock();
    try {
        lock.release();
        ADD_FAILURE() << "release() of a force-unlocked hold did not throw";
    } catch (const NotOwnerError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("'report'"), std::string::npos) << what;
        EXPECT_NE(what.find(client.current_owner()), std::string::npos) << what;
        EXPECT_NE(what.find("127.0.0.1:" + std::to_string(server->port())), std::string::npos) << what;
    }
    const std::string owner = client.new_owner();
    ASSERT_TRUE(lock.async_try_lock(owner).get());
    Lock(operator_client, "report").force_unlock();
    auto unlocked = lock.async_release(owner);
    EXPECT_THROW(unlocked.get(), NotOwnerError);
    EXPECT_EQ(events(Event::Kind::release_failed).size(), 2u);
}

TEST_F(Releasing, APartialUnlockKeepsTheRenewal) {
    Client client(told());
    Lock lock(client, "nested");
    lock.lock();
    lock.lock();
    lock.unlock();
    EXPECT_TRUE(detail::core_of(client).watchdog.renews("nested", client.current_owner()));
    EXPECT_EQ(lock.hold_count(), 1);
    lock.unlock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
    EXPECT_FALSE(lock.is_locked());
    EXPECT_TRUE(events(Event::Kind::release_failed).empty());
}

// No reply (the server paused past the timeout): whether the unlock ran is
// unknown, so the renewal ends and the lease decides.
TEST_F(Releasing, AnUnlockWithNoReplyEndsTheRenewal) {
    Config c = told();
    c.timeout = std::chrono::milliseconds(500);
    Client client(c);
    Lock lock(client, "paused");
    lock.lock();
    const std::stop_token lost = lock.lease_lost_token();
    server->pause();
    lock.unlock();
    server->resume();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u) << "a hold whose unlock got no reply is still renewed";
    EXPECT_TRUE(lost.stop_requested());
    const auto failed = events(Event::Kind::release_failed);
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_NE(failed[0].detail.find("unknown"), std::string::npos) << failed[0].detail;
}

// A completion runs on the client's loop thread: one that throws is told,
// and the loop goes on serving every other lock.
TEST_F(Releasing, AThrowingCompletionIsContained) {
    Client client(told());
    Lock lock(client, "callback");
    std::promise<void> ran;
    lock.async_lock(client.new_owner(), std::nullopt, {}, [&ran](std::exception_ptr, bool) {
        ran.set_value();
        throw std::runtime_error("boom from a completion");
    });
    ASSERT_EQ(ran.get_future().wait_for(20s), std::future_status::ready);
    ASSERT_TRUE(eventually([&] { return events(Event::Kind::completion_threw).size() == 1; }));
    const Event threw = events(Event::Kind::completion_threw).front();
    EXPECT_EQ(threw.name, "callback");
    EXPECT_NE(threw.detail.find("boom from a completion"), std::string::npos) << threw.detail;
    Lock after(client, "after");
    EXPECT_TRUE(after.try_lock());
    after.unlock();
}

// The same for an unlock's completion.
TEST_F(Releasing, AThrowingUnlockCompletionIsContained) {
    Client client(told());
    Lock lock(client, "callback");
    const std::string owner = client.new_owner();
    ASSERT_TRUE(lock.async_lock(owner).get());
    std::promise<void> ran;
    lock.async_release(owner, [&ran](std::exception_ptr error) {
        ran.set_value();
        if (!error) throw std::runtime_error("boom from an unlock completion");
    });
    ASSERT_EQ(ran.get_future().wait_for(20s), std::future_status::ready);
    ASSERT_TRUE(eventually([&] { return events(Event::Kind::completion_threw).size() == 1; }));
    const Event threw = events(Event::Kind::completion_threw).front();
    EXPECT_EQ(threw.name, "callback");
    EXPECT_NE(threw.detail.find("boom from an unlock completion"), std::string::npos) << threw.detail;
    EXPECT_FALSE(lock.is_locked());
    EXPECT_TRUE(lock.try_lock());
    lock.unlock();
}

// token() blocks; on the loop thread it would wait for itself.
TEST_F(Releasing, AFencingTokenReadOnTheLoopThreadIsRefused) {
    Client client(config());
    FencedLock fenced(client, "fence");
    std::promise<std::string> said;
    fenced.async_try_lock(client.new_owner(), std::chrono::milliseconds(0), std::nullopt, {},
                          [&](std::exception_ptr, bool) {
                              try {
                                  fenced.token();
                                  said.set_value("returned");
                              } catch (const std::logic_error& e) {
                                  said.set_value(e.what());
                              }
                          });
    auto answer = said.get_future();
    ASSERT_EQ(answer.wait_for(20s), std::future_status::ready) << "token() deadlocked the loop thread";
    EXPECT_NE(answer.get().find("event loop thread"), std::string::npos);
}

}  // namespace
}  // namespace holdfast::testing
