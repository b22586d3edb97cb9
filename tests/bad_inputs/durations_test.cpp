// Bad-input catalog, leases and waits: zero, negative and enormous ones, in
// every unit, including those that overflow when turned into milliseconds or
// into a steady_clock deadline. A lease is refused or honoured exactly; a wait
// too long for the clock means "no deadline"; nothing is left behind.
#include "bad_inputs/bad_inputs.hpp"

namespace holdfast::testing {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using Durations = BadInputs;

TEST_F(Durations, ZeroLeaseIsRefused) {
    Client client(config());
    Lock lock(client, "job");
    for (auto call : std::vector<std::function<void()>>{
             [&] { lock.lock(milliseconds(0)); },
             [&] { lock.lock(std::chrono::nanoseconds(0)); },
             [&] { lock.try_lock_for(1s, milliseconds(0)); },
             [&] { lock.async_lock(client.new_owner(), milliseconds(0)); },
             [&] { lock.async_try_lock(client.new_owner(), 1s, milliseconds(0)); }})
        EXPECT_TRUE(mentions(error_of<std::invalid_argument>(call), {"lease", "'job'", "must be > 0", "got 0 ms"}));
    expect_nothing_left(client);
}

TEST_F(Durations, NegativeLeaseIsRefused) {
    Client client(config());
    Lock lock(client, "job");
    EXPECT_TRUE(mentions(error_of<std::invalid_argument>([&] { lock.lock(milliseconds(-5)); }),
                         {"lease", "'job'", "got -5 ms"}));
    // Converted to milliseconds these would overflow (undefined behaviour) into
    // who knows what: they are clamped, and refused as negative.
    EXPECT_TRUE(mentions(error_of<std::invalid_argument>([&] { lock.lock(hours::min()); }), {"lease", "must be > 0"}));
    EXPECT_TRUE(mentions(error_of<std::invalid_argument>([&] { lock.try_lock_for(1s, hours::min()); }),
                         {"lease", "must be > 0"}));
    expect_nothing_left(client);
}

// Redis refuses an expiry past LLONG_MAX ms, after the acquire script has
// already written the hold: the lock would stay forever, without a TTL.
TEST_F(Durations, EnormousLeaseIsRefusedBeforeAnythingIsWritten) {
    Client client(config());
    Lock lock(client, "job");
    raw->command({"CONFIG", "RESETSTAT"});
    for (auto call : std::vector<std::function<void()>>{
             [&] { lock.lock(milliseconds::max()); },
             [&] { lock.lock(hours::max()); },
             [&] { lock.lock(max_duration + milliseconds(1)); },
             [&] { lock.try_lock_for(1s, hours::max()); },
             [&] { lock.async_lock(client.new_owner(), milliseconds::max()); },
             [&] { lock.async_try_lock(client.new_owner(), 1s, milliseconds::max()); }})
        EXPECT_TRUE(mentions(error_of<std::invalid_argument>(call),
                             {"lease", "'job'", "too long", std::to_string(max_duration.count()) + " ms",
                              "without a lease"}));
    EXPECT_EQ(script_calls(), 0);
    expect_nothing_left(client);
}

// The limit is not stricter than it says: the longest lease is stored exactly.
TEST_F(Durations, TheLongestLeaseIsHonoured) {
    Client client(config());
    Lock lock(client, "job");
    lock.lock(max_duration);
    const long long ttl = raw->integer({"PTTL", "job"});
    EXPECT_GT(ttl, (max_duration - 1min).count());
    EXPECT_LE(ttl, max_duration.count());
    EXPECT_FALSE(detail::core_of(client).watchdog.renews("job", client.current_owner()));  // watched, not renewed
    lock.unlock();
    expect_nothing_left(client);
}

TEST_F(Durations, NegativeWaitIsRefused) {
    Client client(config());
    Lock lock(client, "job");
    for (auto call : std::vector<std::function<void()>>{
             [&] { lock.try_lock_for(milliseconds(-1)); },
             [&] { lock.try_lock_for(hours::min()); },
             [&] { lock.try_lock_for(std::chrono::duration<double>(-0.5)); },
             [&] { lock.try_lock_for(milliseconds(-1), 10s); },
             [&] { lock.async_try_lock(client.new_owner(), milliseconds(-1)); }})
        EXPECT_TRUE(mentions(error_of<std::invalid_argument>(call), {"wait", "'job'", "must be >= 0"}));
    expect_nothing_left(client);
}

// Zero wait: one attempt, no subscription, false at once.
TEST_F(Durations, ZeroWaitTriesOnceWithoutSubscribing) {
    Client holder(config()), client(config());
    Lock held(holder, "job"), lock(client, "job");
    held.lock();
    raw->command({"CONFIG", "RESETSTAT"});
    EXPECT_FALSE(lock.try_lock_for(milliseconds(0)));
    EXPECT_FALSE(lock.try_lock_for(std::chrono::nanoseconds(0)));
    EXPECT_FALSE(lock.try_lock());
    EXPECT_FALSE(lock.async_try_lock(client.new_owner()).get());
    EXPECT_EQ(script_calls(), 4);
    EXPECT_EQ(calls("subscribe"), 0);
    held.unlock();
    expect_nothing_left(client);
}

// A deadline already past, even the earliest one a clock has, means one try.
// (deadline - now overflows for time_point::min().)
TEST_F(Durations, APastDeadlineTriesOnce) {
    Client holder(config()), client(config());
    Lock held(holder, "job"), lock(client, "job");
    held.lock();
    EXPECT_FALSE(lock.try_lock_until(std::chrono::steady_clock::time_point::min()));
    EXPECT_FALSE(lock.try_lock_until(std::chrono::system_clock::time_point::min()));
    EXPECT_FALSE(lock.try_lock_until(std::chrono::system_clock::now() - 1h));
    held.unlock();
    EXPECT_TRUE(lock.try_lock_until(std::chrono::steady_clock::time_point::min()));  // free: taken at once
    lock.unlock();
    expect_nothing_left(client);
}

// A wait too long for steady_clock (now + wait overflows) means "no deadline":
// the waiter sleeps on the channel and the unlock wakes it.
struct Waiter {
    const char* name;
    std::function<bool(Client&, Lock&)> call;
    friend void PrintTo(const Waiter& w, std::ostream* os) { *os << w.name; }
};
class EnormousWaits : public BadInputs, public ::testing::WithParamInterface<Waiter> {};

TEST_P(EnormousWaits, WaitUntilTheUnlock) {
    Client holder(config()), client(config());
    Lock held(holder, "job"), lock(client, "job");
    held.lock();
    // The waiter's thread owns what it takes, and unlocks it.
    auto waiter = std::async(std::launch::async, [&] {
        const bool got = GetParam().call(client, lock);
        if (got) lock.unlock();
        return got;
    });
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{job}") == 1; }))
        << "the waiter gave up or failed at once";
    EXPECT_NE(waiter.wait_for(50ms), std::future_status::ready);
    held.unlock();
    ASSERT_EQ(waiter.wait_for(20s), std::future_status::ready) << "the unlock did not wake the waiter";
    EXPECT_TRUE(waiter.get());
    expect_nothing_left(client);
}

const Waiter enormous_waits[] = {
    {"MillisecondsMax", [](Client&, Lock& l) { return l.try_lock_for(milliseconds::max()); }},
    {"HoursMax", [](Client&, Lock& l) { return l.try_lock_for(hours::max()); }},
    {"DoubleSecondsMax", [](Client&, Lock& l) { return l.try_lock_for(std::chrono::duration<double>(1e300)); }},
    {"WithLease", [](Client&, Lock& l) { return l.try_lock_for(milliseconds::max(), 10s); }},
    {"SteadyUntilMax", [](Client&, Lock& l) { return l.try_lock_until(std::chrono::steady_clock::time_point::max()); }},
    {"SystemUntilMax", [](Client&, Lock& l) { return l.try_lock_until(std::chrono::system_clock::time_point::max()); }},
    {"AsyncMillisecondsMax",
     [](Client& c, Lock& l) { return l.async_try_lock(c.current_owner(), milliseconds::max()).get(); }},
};

INSTANTIATE_TEST_SUITE_P(BadInputs, EnormousWaits, ::testing::ValuesIn(enormous_waits),
                         [](const auto& info) { return std::string(info.param.name); });

// The semaphores and the latch take durations the same way: an enormous wait
// waits for the release (or the count-down) instead of overflowing into a
// deadline already past; a negative wait, and a lease out of range, are
// refused naming the primitive.
TEST_F(Durations, SemaphoresAndTheLatchTakeDurationsAsLocksDo) {
    Client client(config()), other(config());
    Semaphore slots(client, "slots");
    slots.try_set_permits(0);
    auto taken = std::async(std::launch::async, [&] { return slots.try_acquire_for(hours::max()); });
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_sc:{slots}") == 1; }))
        << "the waiter gave up or failed at once";
    Semaphore(other, "slots").release();
    ASSERT_EQ(taken.wait_for(20s), std::future_status::ready) << "the release did not wake the waiter";
    EXPECT_TRUE(taken.get());

    CountDownLatch done(client, "done");
    done.try_set_count(1);
    auto opened = std::async(std::launch::async, [&] {
        return done.await_until(std::chrono::system_clock::time_point::max());
    });
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_countdownlatch__channel__{done}") == 1; }));
    CountDownLatch(other, "done").count_down();
    ASSERT_EQ(opened.wait_for(20s), std::future_status::ready) << "the count-down did not wake the waiter";
    EXPECT_TRUE(opened.get());

    EXPECT_TRUE(mentions(error_of<std::invalid_argument>([&] { slots.try_acquire_for(hours::min()); }),
                         {"wait", "semaphore 'slots'", "must be >= 0"}));
    EXPECT_TRUE(mentions(error_of<std::invalid_argument>([&] { done.await_for(milliseconds(-1)); }),
                         {"wait", "'done'", "must be >= 0"}));
    PermitExpirableSemaphore pool(client, "pool");
    EXPECT_TRUE(mentions(error_of<std::invalid_argument>([&] { pool.try_acquire(milliseconds::max()); }),
                         {"lease", "permit-expirable semaphore 'pool'", "too long", "without a lease"}));
    EXPECT_TRUE(mentions(error_of<std::invalid_argument>([&] { pool.try_acquire(milliseconds(0)); }),
                         {"lease", "must be > 0"}));
    raw->command({"DEL", "slots", "done"});
    expect_nothing_left(client);
}

// A peer (a Java service, say) may hold a lock with a TTL near Redis's limit.
// A waiter bounds its sleep by that TTL; now + TTL must not overflow into a
// wake-up in the past, which would retry in a busy loop.
TEST_F(Durations, APeersEnormousTtlDoesNotMakeWaitersSpin) {
    raw->command({"HSET", "job", "peer:1", "1"});
    raw->command({"PEXPIRE", "job", "9000000000000000000"});
    cache_scripts();  // one call per script run
    Client client(config());
    Lock lock(client, "job");
    raw->command({"CONFIG", "RESETSTAT"});
    EXPECT_FALSE(lock.try_lock_for(500ms));
    // Refused, refused again once subscribed, then the give-up's unlisting.
    EXPECT_LE(script_calls(), 3) << "the waiter retried in a loop";
    expect_nothing_left(client, 1);
}

}  // namespace
}  // namespace holdfast::testing
