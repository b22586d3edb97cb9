// A redis-server of the test's own, a client on it, and a raw connection to look with.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>

#include "holdfast/holdfast.hpp"
#include "holdfast_scripts.hpp"
#include "redis_server.hpp"
#include "sync_redis.hpp"

namespace holdfast::testing {

using namespace std::chrono_literals;

inline bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds within = 10s);

class RedisTest : public ::testing::Test {
protected:
    void SetUp() override {
        server = std::make_unique<support::RedisServer>(server_args());
        raw = std::make_unique<support::SyncRedis>(server->port());
    }

    virtual std::vector<std::string> server_args() { return {}; }

    /// Calls of `command` (lowercase, e.g. "evalsha") since the last CONFIG RESETSTAT.
    long long calls(const std::string& command) const {
        const std::string info = raw->string({"INFO", "commandstats"});
        const std::string tag = "cmdstat_" + command + ":calls=";
        const auto at = info.find(tag);
        return at == std::string::npos ? 0 : std::stoll(info.substr(at + tag.size()));
    }

    /// Error replies with `code` (e.g. "NOPERM") since the last CONFIG RESETSTAT.
    long long errors(const std::string& code) const {
        const std::string info = raw->string({"INFO", "errorstats"});
        const std::string tag = "errorstat_" + code + ":count=";
        const auto at = info.find(tag);
        return at == std::string::npos ? 0 : std::stoll(info.substr(at + tag.size()));
    }

    /// Script calls: what one acquire attempt, release or renewal costs.
    long long script_calls() const { return calls("evalsha") + calls("eval"); }

    /// Loads every script into the server's cache, so that each call is one
    /// EVALSHA (not a NOSCRIPT EVALSHA and an EVAL) and script_calls() counts
    /// attempts exactly.
    void cache_scripts() const {
        for (const auto* script : scripts::all) raw->command({"SCRIPT", "LOAD", script->body});
    }

    /// Whether the server caches the trusted twin of the lock's acquire (which
    /// a client runs for a user allowed everything once its connection knows).
    bool trusted_acquire_loaded() const {
        return raw->command({"SCRIPT", "EXISTS", scripts::lock_acquire.trusted->sha1})->element[0]->integer == 1;
    }

    /// Subscribers of `channel` on the server.
    long long subscribers(const std::string& channel) const {
        return raw->command({"PUBSUB", "NUMSUB", channel})->element[1]->integer;
    }

    /// Starts `wait(stop)` on another thread, waits until it sleeps on
    /// `channel` (subscribed), stops it, and expects it to end untaken (false)
    /// with its subscription gone.
    void expect_stop_ends(const std::string& channel, const std::function<bool(std::stop_token)>& wait) const {
        std::stop_source stop;
        auto waiting = std::async(std::launch::async, [&] { return wait(stop.get_token()); });
        EXPECT_TRUE(eventually([&] { return subscribers(channel) == 1; })) << channel;
        stop.request_stop();
        ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready) << channel;
        EXPECT_FALSE(waiting.get()) << channel;
        EXPECT_TRUE(eventually([&] { return subscribers(channel) == 0; })) << channel;
    }

    Config config() const {
        Config c;
        c.port = server->port();
        return c;
    }

    /// Runs `hold` in a forked child with a client of its own (made from `c`),
    /// then SIGKILLs the child as soon as `hold` returns: whatever it took is
    /// left as a crashed holder leaves it. Returns what `hold` returned ("" if
    /// it threw).
    static std::string in_killed_process(const Config& c, const std::function<std::string(Client&)>& hold) {
        int fds[2];
        if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
        const pid_t child = ::fork();
        if (child < 0) throw std::runtime_error("fork failed");
        if (child == 0) {
            ::close(fds[0]);
            try {
                Client client(c);
                const std::string report = hold(client) + '\n';
                (void)!::write(fds[1], report.data(), report.size());
            } catch (...) {
                ::_exit(1);
            }
            for (;;) ::pause();
        }
        ::close(fds[1]);
        std::string report;
        char byte = 0;
        while (::read(fds[0], &byte, 1) == 1 && byte != '\n') report += byte;
        ::close(fds[0]);
        ::kill(child, SIGKILL);
        ::waitpid(child, nullptr, 0);
        return report;
    }

    std::unique_ptr<support::RedisServer> server;
    std::unique_ptr<support::SyncRedis> raw;
};

/// Futures their stop tokens ended: each ready within a generous deadline,
/// and false (nothing taken).
inline void expect_stopped_untaken(std::initializer_list<std::future<bool>*> futures) {
    for (std::future<bool>* future : futures) {
        ASSERT_EQ(future->wait_for(10s), std::future_status::ready);
        EXPECT_FALSE(future->get());
    }
}

/// Runs `wait` (a blocking acquire) on a thread of its own, for a test that
/// then destroys the waiter's Client: the future gives the ClosedError's
/// message (its code checked), or "returned without an error".
inline std::future<std::string> wait_until_closed(std::function<void()> wait) {
    return std::async(std::launch::async, [wait = std::move(wait)] {
        try {
            wait();
            return std::string("returned without an error");
        } catch (const ClosedError& e) {  // not a ConnectionError: retrying cannot help
            EXPECT_EQ(e.code(), errc::client_closed);
            return std::string(e.what());
        }
    });
}

/// Waits for `condition` with a generous deadline instead of sleeping and hoping.
inline bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) return true;
        std::this_thread::sleep_for(5ms);
    }
    return condition();
}

/// What a callback form (Completion<T>) delivers, waited for on the test's thread.
template <class T>
struct Delivered {
    std::promise<std::pair<std::exception_ptr, T>> promise;
    Completion<T> done() {
        return [this](std::exception_ptr error, T value) { promise.set_value({error, std::move(value)}); };
    }
    /// The value, or what the completion's error throws.
    T value() {
        auto [error, value] = promise.get_future().get();
        if (error) std::rethrow_exception(error);
        return value;
    }
};

/// Expects `call` to throw std::invalid_argument whose message contains `says`.
inline void expect_invalid_argument(const std::function<void()>& call, const std::string& says) {
    try {
        call();
        ADD_FAILURE() << "accepted; expected std::invalid_argument saying: " << says;
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
}

}  // namespace holdfast::testing
