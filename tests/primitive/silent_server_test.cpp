// A wait against a server that does not answer (SIGSTOPped) ends by
// max(wait, Config::timeout) (docs/lock.md), whatever its form: the give-up
// and give-back steps of an acquire that got no reply go on in the background
// instead of keeping the caller another timeout (before: 2 x timeout for
// every try_lock_for). They still happen once the server answers again.
#include <future>

#include "primitive/names.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using Clock = std::chrono::steady_clock;

class SilentServer : public RedisTest {
protected:
    static constexpr auto timeout = 2s;
    /// Well under the 2 x timeout such a wait took: one timeout, the reply
    /// check's period (timeout / 8) and room for a loaded machine.
    static constexpr auto bound = timeout + 1s;

    Config silent_config() const {
        Config c = config();
        c.timeout = timeout;
        return c;
    }

    /// How long `call` took to return or throw (it throws: no reply came).
    static std::chrono::milliseconds took(const std::function<void()>& call) {
        const auto start = Clock::now();
        try {
            call();
        } catch (const Error&) {
        }
        return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    }

    /// Each form of `forms`, timed against the paused server; then the server
    /// answers again.
    void expect_each_within_bound(const std::vector<std::pair<std::string, std::function<void()>>>& forms) {
        server->pause();
        for (const auto& [form, call] : forms) {
            const auto ms = took(call);
            std::printf("%s: %lld ms\n", form.c_str(), static_cast<long long>(ms.count()));
            EXPECT_LT(ms, bound) << form << " returned " << ms.count() << " ms after the call, with Config::timeout "
                                 << std::chrono::milliseconds(timeout).count() << " ms";
        }
        server->resume();
    }
};

TEST_F(SilentServer, EveryTimedFormOfLockEndsWithinOneTimeout) {
    Client client(silent_config());
    Lock lock(client, "silent");
    lock.lock();  // connected, and the scripts loaded
    lock.unlock();
    expect_each_within_bound({
        {"try_lock()", [&] { lock.try_lock(); }},
        {"try_lock_for(1ms)", [&] { lock.try_lock_for(1ms); }},
        {"try_lock_for(50ms)", [&] { lock.try_lock_for(50ms); }},
        {"try_lock_for(1s)", [&] { lock.try_lock_for(1s); }},
        {"try_lock_for(50ms, stop)", [&] { lock.try_lock_for(50ms, std::stop_source().get_token()); }},
        {"lock(stop)", [&] { lock.lock(std::stop_source().get_token()); }},
        {"async_try_lock(50ms)", [&] { lock.async_try_lock(client.current_owner(), 50ms).get(); }},
    });
    // What those attempts may have taken (each ran once the server read it)
    // was given back meanwhile, in the background.
    EXPECT_TRUE(eventually([&] { return raw->integer({"EXISTS", "silent"}) == 0; }, 20s))
        << "held by " << raw->command({"HGETALL", "silent"})->elements << " owner(s) after the give-backs";
}

TEST_F(SilentServer, EveryTimedFormOfFairLockEndsWithinOneTimeout) {
    Client client(silent_config());
    FairLock lock(client, "silent-fair");
    lock.lock();
    lock.unlock();
    expect_each_within_bound({
        {"fair try_lock()", [&] { lock.try_lock(); }},
        {"fair try_lock_for(1ms)", [&] { lock.try_lock_for(1ms); }},
        {"fair try_lock_for(1s)", [&] { lock.try_lock_for(1s); }},
        {"fair async_try_lock(50ms)", [&] { lock.async_try_lock(client.current_owner(), 50ms).get(); }},
    });
    // Each waiter left the queue (its give-up) and what it took went back.
    const std::string queue = detail::fair_queue_key("silent-fair");
    EXPECT_TRUE(eventually(
        [&] { return raw->integer({"EXISTS", "silent-fair"}) == 0 && raw->integer({"EXISTS", queue}) == 0; }, 20s))
        << raw->integer({"LLEN", queue}) << " waiter(s) left in the queue";
}

// The give-back of an acquire that got no reply goes on after its caller was
// told; the owner's next lock is sent behind it, so it never releases that.
TEST_F(SilentServer, TheGiveBackInTheBackgroundNeverReleasesTheNextHold) {
    Client client(silent_config()), other(config());
    Lock lock(client, "given-back"), rival(other, "given-back");
    lock.lock();
    lock.unlock();
    server->pause();
    EXPECT_THROW(lock.try_lock_for(50ms), Error);
    server->resume();  // the attempt the server had read runs now, and takes the lock
    lock.lock();       // behind the give-back of that attempt's hold
    EXPECT_EQ(lock.hold_count(), 1);
    EXPECT_FALSE(rival.try_lock()) << "the give-back released the owner's new hold";
    lock.unlock();
    EXPECT_EQ(raw->integer({"EXISTS", "given-back"}), 0);
}

}  // namespace
}  // namespace holdfast::testing
