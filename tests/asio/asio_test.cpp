// holdfast/asio.hpp: completion tokens, coroutines and cancellation slots;
// and the std::stop_token forms of the blocking waits.
#include "holdfast/asio.hpp"

#include <asio/bind_cancellation_slot.hpp>
#include <asio/bind_executor.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/experimental/deferred.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/io_context.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>

#include <atomic>
#include <future>
#include <thread>

#include "core/client_core.hpp"
#include "holdfast/multi_lock.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using Asio = RedisTest;
using asio::awaitable;
using asio::use_awaitable;
using namespace asio::experimental::awaitable_operators;

const std::string door_channel = "redisson_lock__channel:{door}";

// Runs `body` as a coroutine on a fresh io_context on this thread until it ends.
void run_coroutine(std::function<awaitable<void>(asio::io_context&)> body) {
    asio::io_context io;
    std::exception_ptr failure;
    asio::co_spawn(io, body(io), [&](std::exception_ptr e) { failure = e; });
    io.run();
    if (failure) std::rethrow_exception(failure);
}

// The docs/async.md example: many coroutines on one thread take turns on a
// few locks, one owner each, and never overlap.
TEST_F(Asio, AThousandCoroutinesOnOneThreadTakeTurns) {
    constexpr int coroutines = 1000, lock_count = 4;
    Client client(config());
    std::vector<Lock> locks;
    for (int i = 0; i < lock_count; ++i) locks.emplace_back(client, "counter:" + std::to_string(i));
    std::array<bool, lock_count> inside{};
    int overlaps = 0, finished = 0;
    asio::io_context io;
    for (int i = 0; i < coroutines; ++i) {
        asio::co_spawn(
            io,
            [&, i]() -> awaitable<void> {
                Lock& lock = locks[i % lock_count];
                const std::string owner = client.new_owner();
                co_await async_lock(lock, owner, use_awaitable);
                if (inside[i % lock_count]) ++overlaps;
                inside[i % lock_count] = true;
                asio::steady_timer pause(io, std::chrono::microseconds(100));  // others run meanwhile
                co_await pause.async_wait(use_awaitable);
                inside[i % lock_count] = false;
                co_await async_release(lock, owner, use_awaitable);
                ++finished;
            },
            asio::detached);
    }
    io.run();  // returns once every coroutine is done: each pending wait keeps it busy
    EXPECT_EQ(finished, coroutines);
    EXPECT_EQ(overlaps, 0);
    for (const Lock& lock : locks) EXPECT_FALSE(lock.is_locked());
}

// `||` cancels the slower operation: a wait that loses to a timer leaves no
// hold, no renewal and no subscription.
TEST_F(Asio, AWaitThatLosesToATimerLeavesNothing) {
    Client holder_client(config()), client(config());
    Lock held(holder_client, "door"), wanted(client, "door");
    held.lock();
    const std::string owner = client.new_owner();
    run_coroutine([&](asio::io_context& io) -> awaitable<void> {
        asio::steady_timer timeout(io, std::chrono::milliseconds(300));
        auto first = co_await (async_lock(wanted, owner, use_awaitable) || timeout.async_wait(use_awaitable));
        EXPECT_EQ(first.index(), 1u) << "the lock was taken though its holder kept it";
    });
    EXPECT_TRUE(eventually([&] { return subscribers(door_channel) == 0; }));
    ASSERT_EQ(wanted.holders().size(), 1u);
    EXPECT_EQ(wanted.holders()[0].owner, holder_client.current_owner());
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
    held.unlock();
}

// Cancelled through a slot the caller emits on (no `||`): operation_aborted.
TEST_F(Asio, ACancelledWaitCompletesWithOperationAborted) {
    Client holder_client(config()), client(config());
    Lock held(holder_client, "door"), wanted(client, "door");
    held.lock();
    asio::io_context io;
    asio::cancellation_signal cancel;
    std::exception_ptr outcome;
    bool completed = false, taken = true;
    async_lock(wanted, client.new_owner(),
               asio::bind_cancellation_slot(cancel.slot(), asio::bind_executor(io, [&](std::exception_ptr e, bool t) {
                                                completed = true;
                                                outcome = e;
                                                taken = t;
                                            })));
    ASSERT_TRUE(eventually([&] { return subscribers(door_channel) == 1; }));
    asio::post(io, [&] { cancel.emit(asio::cancellation_type::terminal); });
    io.run();
    ASSERT_TRUE(completed);
    EXPECT_FALSE(taken);  // what the member form says of a stopped wait
    try {
        std::rethrow_exception(outcome);
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), asio::error::operation_aborted) << e.what();
    } catch (...) {
        ADD_FAILURE() << "expected operation_aborted";
    }
    EXPECT_TRUE(eventually([&] { return subscribers(door_channel) == 0; }));
    EXPECT_EQ(wanted.holders().size(), 1u);
    held.unlock();
}

TEST_F(Asio, FuturesCallbacksAndDeferredWork) {
    Client client(config());
    Lock lock(client, "door");
    const std::string owner = client.new_owner();
    EXPECT_TRUE(async_try_lock(lock, owner, std::chrono::milliseconds(0), asio::use_future).get());
    // A plain callback has no executor of its own: it runs on the client's loop thread.
    std::promise<std::exception_ptr> released;
    async_release(lock, owner, [&](std::exception_ptr e) { released.set_value(e); });
    EXPECT_EQ(released.get_future().get(), nullptr);
    auto deferred = async_try_lock(lock, owner, std::chrono::milliseconds(0), asio::experimental::deferred);
    EXPECT_FALSE(lock.is_locked()) << "a deferred operation starts only when invoked";
    EXPECT_TRUE(std::move(deferred)(asio::use_future).get());
    async_release(lock, owner, asio::use_future).get();
    EXPECT_FALSE(lock.is_locked());
}

TEST_F(Asio, ErrorsReachTheCoroutineAsExceptions) {
    Client client(config());
    Lock lock(client, "door");
    run_coroutine([&](asio::io_context&) -> awaitable<void> {
        EXPECT_THROW(co_await async_release(lock, client.new_owner(), use_awaitable), NotOwnerError);
    });
}

// with_error_code(token): the usual Asio error_code handling, with holdfast's codes.
TEST_F(Asio, ErrorCodesReachRedirectErrorAndAsTuple) {
    Client client(config());
    Lock lock(client, "door");
    run_coroutine([&](asio::io_context&) -> awaitable<void> {
        std::error_code ec;
        co_await async_release(lock, client.new_owner(), with_error_code(asio::redirect_error(use_awaitable, ec)));
        EXPECT_EQ(ec, errc::not_owner) << ec.message();
        EXPECT_EQ(ec, std::errc::operation_not_permitted);
        const std::string owner = client.new_owner();
        auto [taken_ec, taken] = co_await async_try_lock(lock, owner, std::chrono::milliseconds(0),
                                                         with_error_code(asio::experimental::as_tuple(use_awaitable)));
        EXPECT_FALSE(taken_ec);
        EXPECT_TRUE(taken);
        auto [released_ec] =
            co_await async_release(lock, owner, with_error_code(asio::experimental::as_tuple(use_awaitable)));
        EXPECT_FALSE(released_ec) << released_ec.message();
    });
    EXPECT_FALSE(lock.is_locked());
    // A plain callback taking the code, and a future of the error_code form.
    std::promise<std::error_code> released;
    async_release(lock, client.new_owner(), with_error_code([&](std::error_code ec) { released.set_value(ec); }));
    EXPECT_EQ(released.get_future().get(), errc::not_owner);
    EXPECT_EQ(async_try_lock(lock, client.new_owner(), std::chrono::milliseconds(0),
                             with_error_code(asio::use_future)).get(), true);
}

TEST_F(Asio, ACancelledWaitGivesOperationAbortedAsACode) {
    Client holder_client(config()), client(config());
    Lock held(holder_client, "door"), wanted(client, "door");
    held.lock();
    asio::io_context io;
    asio::cancellation_signal cancel;
    std::optional<std::error_code> outcome;
    async_lock(wanted, client.new_owner(),
               with_error_code(asio::bind_cancellation_slot(
                   cancel.slot(), asio::bind_executor(io, [&](std::error_code ec, bool) { outcome = ec; }))));
    ASSERT_TRUE(eventually([&] { return subscribers(door_channel) == 1; }));
    asio::post(io, [&] { cancel.emit(asio::cancellation_type::terminal); });
    io.run();
    ASSERT_TRUE(outcome);
    EXPECT_EQ(*outcome, asio::error::operation_aborted) << outcome->message();
    EXPECT_TRUE(eventually([&] { return subscribers(door_channel) == 0; }));
    held.unlock();
}

// What a callback form completed with, as a code: no server needed.
TEST(AsioErrorCodes, AreTheErrorsCodes) {
    EXPECT_FALSE(asio_detail::code_of(nullptr));
    EXPECT_EQ(asio_detail::code_of(std::make_exception_ptr(NotOwnerError("n"))), errc::not_owner);
    EXPECT_EQ(asio_detail::code_of(std::make_exception_ptr(ServerError("s", "OOM"))), errc::out_of_memory);
    EXPECT_EQ(asio_detail::code_of(asio_detail::aborted()), asio::error::operation_aborted);
    static_assert(std::is_same_v<asio_detail::with_code<void(std::exception_ptr, bool)>::type,
                                 void(std::error_code, bool)>);
}

TEST_F(Asio, FencedSemaphoreAndLatchAdapters) {
    Client client(config()), other(config());
    FencedLock fenced(client, "fence");
    Semaphore semaphore(client, "slots");
    PermitExpirableSemaphore permits(client, "leases");
    CountDownLatch latch(client, "start");
    ASSERT_TRUE(semaphore.try_set_permits(0));
    ASSERT_TRUE(permits.try_set_permits(1));
    ASSERT_TRUE(latch.try_set_count(1));
    run_coroutine([&](asio::io_context&) -> awaitable<void> {
        const std::string owner = client.new_owner();
        const std::optional<std::int64_t> token = co_await async_lock_and_get_token(fenced, owner, use_awaitable);
        EXPECT_GT(token.value_or(0), 0);
        co_await async_release(fenced, owner, use_awaitable);

        // Woken by releases and count-downs from another client's thread.
        auto helper = std::async(std::launch::async, [&] {
            Semaphore(other, "slots").release(2);
            CountDownLatch(other, "start").count_down();
        });
        EXPECT_TRUE(co_await async_acquire(semaphore, 2, use_awaitable));
        EXPECT_TRUE(co_await async_await(latch, use_awaitable));
        helper.get();
        EXPECT_FALSE(co_await async_try_acquire(semaphore, 1, std::chrono::milliseconds(50), use_awaitable));
        co_await async_release(semaphore, 2, use_awaitable);
        EXPECT_TRUE(co_await async_await_for(latch, std::chrono::milliseconds(0), use_awaitable));

        const std::optional<std::string> permit = co_await async_acquire(permits, use_awaitable);
        EXPECT_TRUE(permit);
        EXPECT_FALSE(co_await async_try_acquire(permits, std::chrono::milliseconds(0), use_awaitable));
        co_await async_release(permits, permit.value_or(""), use_awaitable);
    });
    EXPECT_EQ(semaphore.available_permits(), 2);
    EXPECT_EQ(permits.available_permits(), 1);
}

// Every adapter completes with what its member callback form gets: the
// leases, batches and quiet releases included.
TEST_F(Asio, EachAdapterCompletesAsItsMemberForm) {
    Client client(config());
    Lock lock(client, "door");
    FencedLock fenced(client, "fence");
    Semaphore semaphore(client, "slots");
    PermitExpirableSemaphore permits(client, "leases");
    ASSERT_TRUE(permits.try_set_permits(4));
    run_coroutine([&](asio::io_context&) -> awaitable<void> {
        const std::string owner = client.new_owner();
        EXPECT_TRUE(co_await async_try_lock(lock, owner, 0ms, 5s, use_awaitable));
        EXPECT_LE(raw->integer({"PTTL", "door"}), 5000);
        co_await async_release(lock, owner, use_awaitable);
        EXPECT_TRUE(co_await async_lock(lock, owner, 4s, use_awaitable));
        EXPECT_LE(raw->integer({"PTTL", "door"}), 4000);
        co_await async_release(lock, owner, use_awaitable);

        const auto token = co_await async_lock_and_get_token(fenced, owner, 5s, use_awaitable);
        EXPECT_TRUE(token);
        co_await async_release(fenced, owner, use_awaitable);
        const auto again = co_await async_try_lock_and_get_token(fenced, owner, 0ms, 5s, use_awaitable);
        EXPECT_GT(again.value_or(0), token.value_or(0));
        EXPECT_LE(raw->integer({"PTTL", "fence"}), 5000);
        co_await async_release(fenced, owner, use_awaitable);

        EXPECT_FALSE(co_await async_release_if_exists(semaphore, 1, use_awaitable));
        EXPECT_EQ(raw->integer({"EXISTS", "slots"}), 0);
        co_await async_release(semaphore, 1, use_awaitable);
        EXPECT_TRUE(co_await async_release_if_exists(semaphore, 1, use_awaitable));

        const std::vector<std::string> two = co_await async_acquire(permits, 2, 30s, use_awaitable);
        EXPECT_EQ(two.size(), 2u);
        const std::vector<std::string> one = co_await async_try_acquire(permits, 1, 0ms, use_awaitable);
        EXPECT_EQ(one.size(), 1u);
        EXPECT_TRUE((co_await async_try_acquire(permits, 2, 0ms, 30s, use_awaitable)).empty());
        const auto single = co_await async_try_acquire(permits, 0ms, 30s, use_awaitable);
        EXPECT_TRUE(single);
        EXPECT_TRUE(co_await async_try_release(permits, single.value_or(""), use_awaitable));
        EXPECT_FALSE(co_await async_try_release(permits, single.value_or(""), use_awaitable));
        EXPECT_TRUE(co_await async_try_release(permits, one, use_awaitable));
        co_await async_release(permits, two, use_awaitable);
        EXPECT_FALSE(co_await async_try_release(permits, two, use_awaitable));
        const std::vector<std::string> three = co_await async_acquire(permits, 3, use_awaitable);
        EXPECT_EQ(three.size(), 3u);
        co_await async_release(permits, three, use_awaitable);
    });
    EXPECT_EQ(permits.available_permits(), 4);
    EXPECT_EQ(semaphore.available_permits(), 2);
}

// A cancelled wait for a batch: operation_aborted, an empty list, nothing taken.
TEST_F(Asio, ACancelledBatchWaitTakesNothing) {
    Client client(config());
    PermitExpirableSemaphore permits(client, "leases");
    ASSERT_TRUE(permits.try_set_permits(1));
    asio::io_context io;
    asio::cancellation_signal cancel;
    std::optional<std::pair<std::error_code, std::vector<std::string>>> outcome;
    async_acquire(permits, 2, with_error_code(asio::bind_cancellation_slot(
                                  cancel.slot(), asio::bind_executor(io, [&](std::error_code ec, std::vector<std::string> ids) {
                                      outcome.emplace(ec, std::move(ids));
                                  }))));
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_sc:{leases}") == 1; }));
    asio::post(io, [&] { cancel.emit(asio::cancellation_type::terminal); });
    io.run();
    ASSERT_TRUE(outcome);
    EXPECT_EQ(outcome->first, asio::error::operation_aborted);
    EXPECT_TRUE(outcome->second.empty());
    EXPECT_EQ(permits.available_permits(), 1);
    EXPECT_EQ(permits.acquired_permits(), 0);
}

// The blocking forms' std::stop_token overloads: a std::jthread stopped while
// it waits returns false and leaves nothing behind.
TEST_F(Asio, AJThreadStoppedWhileWaitingLeavesNothing) {
    Client holder_client(config()), client(config());
    Lock held(holder_client, "door");
    held.lock();
    std::promise<bool> got;
    std::jthread waiter([&](std::stop_token stop) { got.set_value(Lock(client, "door").lock(stop)); });
    ASSERT_TRUE(eventually([&] { return subscribers(door_channel) == 1; }));
    waiter.request_stop();
    EXPECT_FALSE(got.get_future().get());
    EXPECT_TRUE(eventually([&] { return subscribers(door_channel) == 0; }));
    EXPECT_EQ(held.holders().size(), 1u);
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
    held.unlock();
}

TEST_F(Asio, StopTokensEndEveryKindOfBlockingWait) {
    Client client(config()), holder_client(config());
    Semaphore semaphore(client, "slots");
    PermitExpirableSemaphore permits(client, "leases");
    CountDownLatch latch(client, "start");
    Lock a(holder_client, "a"), b(client, "b");
    MultiLock both({a, b});
    ASSERT_TRUE(semaphore.try_set_permits(0));
    ASSERT_TRUE(permits.try_set_permits(0));
    ASSERT_TRUE(latch.try_set_count(1));
    Lock(holder_client, "a").lock();
    // Each wait starts, is seen waiting (subscribed), then is stopped.
    const auto stopped = [this](const std::string& channel, const std::function<bool(std::stop_token)>& wait) {
        expect_stop_ends(channel, wait);
    };
    stopped("redisson_sc:{slots}", [&](std::stop_token s) { return semaphore.acquire(1, s); });
    stopped("redisson_sc:{slots}", [&](std::stop_token s) { return semaphore.try_acquire_for(1, 10s, s); });
    stopped("redisson_sc:{leases}", [&](std::stop_token s) { return permits.acquire(s).has_value(); });
    stopped("redisson_countdownlatch__channel__{start}", [&](std::stop_token s) { return latch.await(s); });
    stopped("redisson_countdownlatch__channel__{start}", [&](std::stop_token s) { return latch.await_for(10s, s); });
    stopped("redisson_lock__channel:{a}", [&](std::stop_token s) { return both.lock(s); });
    stopped("redisson_lock__channel:{a}", [&](std::stop_token s) { return both.try_lock_for(10s, s); });
    EXPECT_FALSE(b.is_locked());
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
}

// A plain callback runs inline on the client's loop thread: one that throws
// is told (Event::Kind::completion_threw), and the loop goes on.
TEST_F(Asio, AThrowingPlainCallbackIsContained) {
    std::atomic<int> threw{0};
    Config c = config();
    c.on_event = [&threw](const Event& event) {
        if (event.kind == Event::Kind::completion_threw) ++threw;
    };
    Client client(c);
    Lock door(client, "door");
    const std::string owner = client.new_owner();
    holdfast::async_lock(door, owner, [](std::exception_ptr, bool) { throw std::runtime_error("boom from a callback"); });
    ASSERT_TRUE(eventually([&] { return threw.load() == 1; }));
    EXPECT_TRUE(door.async_release(owner).wait_for(20s) == std::future_status::ready);
    EXPECT_FALSE(door.is_locked());
}

}  // namespace
}  // namespace holdfast::testing
