// docs/async.md's example: 1,000 coroutines on one thread share a few locks
// through holdfast/asio.hpp, each with an owner of its own; a timeout with ||;
// a std::jthread stopped while it waits. Uses REDIS_URL, or starts a private
// redis-server.
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "holdfast/asio.hpp"
#include "holdfast/holdfast.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;
using asio::awaitable;
using asio::use_awaitable;

namespace {

constexpr int kCoroutines = 1000;
constexpr std::size_t kLocks = 4;

// Each coroutine takes its lock, counts while holding it, and gives it back.
awaitable<void> worker(holdfast::Lock& lock, holdfast::Client& client, long& counter, int& inside, int& overlaps) {
    const std::string owner = client.new_owner();  // coroutines hop threads: never the thread's owner
    co_await holdfast::async_lock(lock, owner, use_awaitable);
    if (inside++ > 0) ++overlaps;
    const long seen = counter;
    asio::steady_timer pause(co_await asio::this_coro::executor, 100us);  // let others run meanwhile
    co_await pause.async_wait(use_awaitable);
    counter = seen + 1;  // lost if another held the lock meanwhile
    --inside;
    co_await holdfast::async_release(lock, owner, use_awaitable);
}

// A wait bounded by a timer: whichever finishes first cancels the other, and
// a cancelled wait leaves nothing held.
awaitable<void> with_timeout(holdfast::Lock& lock, holdfast::Client& client) {
    asio::steady_timer timeout(co_await asio::this_coro::executor, 200ms);
    const std::string owner = client.new_owner();
    auto first = co_await (holdfast::async_lock(lock, owner, use_awaitable) || timeout.async_wait(use_awaitable));
    if (first.index() == 0) {
        std::printf("  timeout: took %s before the timer\n", lock.name().c_str());
        co_await holdfast::async_release(lock, owner, use_awaitable);
    } else {
        std::printf("  timeout: %s still held after 200 ms; the wait was cancelled and holds nothing\n",
                    lock.name().c_str());
    }
}

}  // namespace

int main() {
    try {
        std::optional<holdfast::support::RedisServer> server;
        std::string url = std::getenv("REDIS_URL") ? std::getenv("REDIS_URL") : "";
        if (url.empty()) url = server.emplace().url();
        holdfast::Client client(holdfast::Config::from_uri(url));

        std::vector<holdfast::Lock> locks;
        for (std::size_t i = 0; i < kLocks; ++i) locks.emplace_back(client, "async-example:" + std::to_string(i));
        std::array<long, kLocks> counters{};
        std::array<int, kLocks> inside{};
        int overlaps = 0;
        asio::io_context io;  // one thread: this one
        for (int i = 0; i < kCoroutines; ++i) {
            const std::size_t k = static_cast<std::size_t>(i) % kLocks;
            asio::co_spawn(io, worker(locks[k], client, counters[k], inside[k], overlaps), asio::detached);
        }
        const auto start = std::chrono::steady_clock::now();
        io.run();
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
        long total = 0;
        for (long c : counters) total += c;
        std::printf("%d coroutines on one thread, %zu locks: %ld increments (expected %d), %d overlaps, %lld ms\n",
                    kCoroutines, kLocks, total, kCoroutines, overlaps, static_cast<long long>(ms.count()));

        // The timeout: another owner holds the lock meanwhile.
        holdfast::Lock held(client, "async-example:held");
        held.lock();
        asio::io_context timeouts;
        asio::co_spawn(timeouts, with_timeout(held, client), asio::detached);
        timeouts.run();

        // A std::jthread waiting for the same lock, stopped by its destructor's request_stop().
        {
            std::jthread waiter([&](std::stop_token stop) {
                const bool got = holdfast::Lock(client, "async-example:held").lock(stop);
                std::printf("  jthread: %s\n", got ? "took the lock" : "stopped while waiting, holds nothing");
            });
            std::this_thread::sleep_for(100ms);
        }
        held.unlock();
        return total == kCoroutines && overlaps == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "async_coroutines: %s\n", e.what());
        return 2;
    }
}
