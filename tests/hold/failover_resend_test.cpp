// A release run on the deposed master in the seconds of a SENTINEL FAILOVER
// (docs/deployments.md, "Replica sync"): no replica acknowledges it (or its
// reply is lost in the switch), and the promoted replica still has the hold. The re-send releases it there and wakes
// its waiter within seconds, not at the end of the lease, whether the holder's
// Client lives on or is destroyed right after the release (a process that
// exits after its unlock, `holdfast run` among them: before, the re-send died
// with the client and the waiter got the lock only when the lease ran out).
// Real processes: two data nodes and three sentinels.
#include <future>

#include "primitive/names.hpp"
#include "redis_fixture.hpp"
#include "sentinel_group.hpp"

namespace holdfast::testing {
namespace {

using Clock = std::chrono::steady_clock;

struct Case {
    std::chrono::milliseconds failover_before;  // SENTINEL FAILOVER this long before the release
    bool holder_leaves;                         // the holder's Client destroyed right after it
};

class FailoverReSend : public ::testing::TestWithParam<Case> {
protected:
    static constexpr auto lease = 10s;
    support::SentinelGroup group;
};

TEST_P(FailoverReSend, TheHoldTheFailoverBroughtBackIsReleasedOnTheNewMaster) {
    const auto [failover_before, holder_leaves] = GetParam();
    Config c = Config::from_uri(group.url());
    c.lock_watchdog_timeout = lease;
    auto holder = std::make_unique<Client>(c);
    Client other(Config::from_uri(group.url()));
    Lock lock(*holder, "contested"), wanted(other, "contested");
    lock.lock();
    auto waiting = std::async(std::launch::async, [&] {
        const auto until = Clock::now() + 60s;
        for (;;) {
            try {
                const bool got = wanted.try_lock_until(until);
                return std::make_pair(got, Clock::now());
            } catch (const ConnectionError&) {
                // An attempt on the wire when the failover moved the connection
                // (docs/errors.md): whether it ran is unknown; wait again.
            }
        }
    });
    support::SyncRedis old_master(group.master_port());
    const std::string channel = detail::lock_channel("contested");
    ASSERT_TRUE(eventually([&] { return old_master.command({"PUBSUB", "NUMSUB", channel})->element[1]->integer > 0; }))
        << "the waiter never waited";

    // -NOGOODSLAVE until the sentinel has seen the replica: asked again.
    ASSERT_TRUE(eventually([&] {
        return support::SyncRedis(group.sentinels[0]->port())
                   .command({"SENTINEL", "FAILOVER", group.master_name()})
                   ->type != REDIS_REPLY_ERROR;
    })) << "the sentinel refused the failover";
    std::this_thread::sleep_for(failover_before);
    std::string release = "confirmed";
    try {
        lock.release();
    } catch (const ReplicaSyncError&) {
        release = "unconfirmed";  // run on the deposed master: the promoted replica has the hold
    } catch (const ConnectionError&) {
        release = "unanswered";  // in flight at the switch: sent again as well
    }
    const auto released = Clock::now();
    if (holder_leaves) {
        holder.reset();
        const auto closing = Clock::now() - released;
        EXPECT_LT(closing, c.timeout + 1s) << "the Client's destructor waited past Config::timeout";
        std::printf("the holder's Client closed in %lld ms\n",
                    static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(closing).count()));
    }
    // Well before the lease (10 s) would end it: the hold is released on the new master.
    ASSERT_EQ(waiting.wait_for(lease / 2), std::future_status::ready)
        << "the waiter still waits " << std::chrono::duration_cast<std::chrono::milliseconds>(lease / 2).count()
        << " ms after the release (" << release << ")";
    const auto [got, at] = waiting.get();
    EXPECT_TRUE(got);
    std::printf("release %s; the waiter got the lock %lld ms after it\n", release.c_str(),
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(at - released).count()));
    wanted.unlock();
}

INSTANTIATE_TEST_SUITE_P(Timings, FailoverReSend,
                         ::testing::Values(Case{400ms, false}, Case{800ms, false}, Case{400ms, true},
                                           Case{800ms, true}),
                         [](const auto& info) {
                             return std::to_string(info.param.failover_before.count()) + "ms_" +
                                    (info.param.holder_leaves ? "leaves" : "stays");
                         });

}  // namespace
}  // namespace holdfast::testing
