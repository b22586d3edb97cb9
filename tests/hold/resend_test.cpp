// The re-send of a release no replica confirmed (docs/deployments.md, "Replica
// sync") against a real master and replica: it releases a hold a failover
// brought back (written here by hand, as a promoted replica that missed the
// release would still have it), and never a hold its owner took after the
// release it repeats, before, during or after its rounds.
#include <functional>
#include <future>

#include "replica_fixture.hpp"

namespace holdfast::testing {
namespace {

using Clock = std::chrono::steady_clock;

class ReSend : public ReplicatedTest, public ::testing::WithParamInterface<ReplicaSync> {
protected:
    /// Re-sends every 300 ms (the WAIT's timeout), for a 3 s lease.
    Config synced(ReplicaSync mode = GetParam()) const {
        Config c = config();
        c.replica_sync = mode;
        c.replica_sync_timeout = 300ms;
        c.lock_watchdog_timeout = lease;
        return c;
    }

    /// Releases `lock` (held once) with the replica paused: unconfirmed, so
    /// its re-sends start. Returns when it was told.
    Clock::time_point release_unconfirmed(Lock& lock) {
        replica->pause();
        EXPECT_THROW(lock.release(), ReplicaSyncError);
        return Clock::now();
    }

    void resume_replica() {
        replica->resume();
        support::SentinelGroup::wait_for_replicas(server->port(), 1);
    }

    /// Until the rounds of a re-send told at `told` are over: they end with
    /// the lease (and the last one sent then is answered within a WAIT).
    static void outlast_the_re_sends(Clock::time_point told) {
        std::this_thread::sleep_until(told + lease + 2 * 300ms + 500ms);
    }

    /// What a failover brings back: `count` holds of `owner` (added to those
    /// on the master), on a long lease the test must not wait out.
    void bring_back(const std::string& key, const std::string& owner, int count) {
        raw->command({"HINCRBY", key, owner, std::to_string(count)});
        raw->command({"PEXPIRE", key, "30000"});
    }

    /// `wanted` gets the lock well before a brought-back hold's lease ends.
    static void expect_taken_soon(Lock& wanted, const std::function<void()>& meanwhile = [] {}) {
        auto waiting = std::async(std::launch::async, [&] { return wanted.try_lock_for(20s); });
        meanwhile();
        ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready) << "a hold brought back stayed until its lease";
        EXPECT_TRUE(waiting.get());
        wanted.unlock();
    }

    std::string count_of(const std::string& key, const std::string& owner) const {
        return raw->string({"HGET", key, owner});
    }

    static constexpr auto lease = 3s;
};

// The owner locks again before the first re-send's turn (under `required`
// once the replica is back; under `wait` at once): the re-send must not
// release the new hold (before: it did, ~300 ms later, and another client
// took the lock while the owner believed it held it).
TEST_P(ReSend, ALockTakenAgainBeforeTheReSendIsKept) {
    Client client(synced()), other(synced(ReplicaSync::off));
    Lock lock(client, "taken-again");
    lock.lock();
    const auto told = release_unconfirmed(lock);
    if (GetParam() == ReplicaSync::required) resume_replica();
    lock.lock();
    outlast_the_re_sends(told);
    EXPECT_EQ(count_of("taken-again", client.current_owner()), "1") << "a re-send released the owner's new hold";
    Lock rival(other, "taken-again");
    EXPECT_FALSE(rival.try_lock()) << "another client took a lock its owner holds";
    EXPECT_FALSE(lock.lease_lost_token().stop_requested());
    if (GetParam() == ReplicaSync::wait) resume_replica();
    EXPECT_NO_THROW(lock.release());
    EXPECT_EQ(raw->integer({"EXISTS", "taken-again"}), 0);
}

// The owner locks again while the re-sends go round (each unconfirmed, the
// replica paused), at every point of a round: after its release was sent,
// during its WAIT, between rounds.
TEST_P(ReSend, ALockTakenAgainBetweenRoundsIsKept) {
    Client client(synced()), other(synced(ReplicaSync::off));
    const std::string owner = client.current_owner();
    for (const auto delay : {450ms, 550ms, 700ms, 850ms}) {
        SCOPED_TRACE("locked again " + std::to_string(delay.count()) + " ms after the release");
        const std::string name = "round-" + std::to_string(delay.count());
        Lock lock(client, name);
        lock.lock();
        const auto told = release_unconfirmed(lock);
        std::this_thread::sleep_until(told + delay);  // the re-sends' rounds go on meanwhile
        if (GetParam() == ReplicaSync::required) resume_replica();
        lock.lock();
        if (GetParam() == ReplicaSync::wait) resume_replica();
        outlast_the_re_sends(told);
        EXPECT_EQ(count_of(name, owner), "1") << "a re-send released the owner's new hold";
        Lock rival(other, name);
        EXPECT_FALSE(rival.try_lock());
        lock.unlock();
    }
}

// A reentrant hold taken again: both holds stay, and two releases free it.
TEST_P(ReSend, AReentrantHoldTakenAgainKeepsItsCount) {
    Client client(synced());
    Lock lock(client, "reentered");
    lock.lock();
    const auto told = release_unconfirmed(lock);
    if (GetParam() == ReplicaSync::required) resume_replica();
    lock.lock();
    lock.lock();
    if (GetParam() == ReplicaSync::wait) resume_replica();
    outlast_the_re_sends(told);
    EXPECT_EQ(count_of("reentered", client.current_owner()), "2");
    EXPECT_EQ(lock.hold_count(), 2);
    EXPECT_NO_THROW(lock.release());
    EXPECT_NO_THROW(lock.release());
    EXPECT_EQ(raw->integer({"EXISTS", "reentered"}), 0);
}

// A failover brings the released hold back under the owner's new one: the
// server counts a hold more than the owner knows of, and its last release
// gives both back (the release verdict's give-back of the rest), waking a
// waiter at once rather than at the end of the lease.
TEST_P(ReSend, AHoldBroughtBackUnderANewOneGoesWithTheLastRelease) {
    Client client(synced()), other(synced(ReplicaSync::off));
    const std::string owner = client.current_owner();
    Lock lock(client, "revived-under");
    lock.lock();
    release_unconfirmed(lock);
    resume_replica();
    lock.lock();
    bring_back("revived-under", owner, 1);  // the old hold, under the new one
    Lock wanted(other, "revived-under");
    expect_taken_soon(wanted, [&] { EXPECT_NO_THROW(lock.release()); });
}

// An acquire that did not take the lock (refused: another owner holds it on
// the master) pauses the re-send only while it runs: the hold a failover
// brings back afterwards is still released, its waiter woken.
TEST_P(ReSend, AFailedLockDoesNotEndTheReSend) {
    Client client(synced()), other(synced(ReplicaSync::off));
    const std::string owner = client.current_owner();
    Lock lock(client, "refused-meanwhile");
    lock.lock();
    release_unconfirmed(lock);
    Lock rival(other, "refused-meanwhile");
    ASSERT_TRUE(rival.try_lock());
    EXPECT_FALSE(lock.try_lock_for(100ms));
    rival.unlock();
    bring_back("refused-meanwhile", owner, 1);
    expect_taken_soon(rival);
    resume_replica();  // the re-send confirmed: the Client closes at once
}

// A failover brought back more holds of the owner than it released (a
// reentrant release before the last one was lost too): the re-send releases
// them all, though its first release there is answered "still held".
TEST_P(ReSend, EveryHoldBroughtBackGoes) {
    Client client(synced()), other(synced(ReplicaSync::off));
    const std::string owner = client.current_owner();
    Lock lock(client, "revived-twice");
    lock.lock();
    release_unconfirmed(lock);
    bring_back("revived-twice", owner, 2);
    resume_replica();  // the next round's WAIT is acknowledged
    Lock wanted(other, "revived-twice");
    expect_taken_soon(wanted);
}

// A release of the owner's last hold that got no reply (the master paused
// past Config::timeout, as a failover's switch drops a command in flight) may
// or may not have run: it is sent again too, so a hold still there (or back
// from a failover) goes once the master answers, not at the end of its lease.
TEST_P(ReSend, AReleaseThatGotNoReplyIsSentAgain) {
    Config c = synced();
    c.timeout = 500ms;
    Client client(c), other(synced(ReplicaSync::off));
    const std::string owner = client.current_owner();
    Lock lock(client, "unanswered");
    lock.lock();
    replica->pause();  // no round is confirmed: they go on
    server->pause();
    EXPECT_THROW(lock.release(), ConnectionError);
    server->resume();                      // the release the master had read runs now...
    bring_back("unanswered", owner, 1);    // ...and the hold is there all the same
    Lock wanted(other, "unanswered");
    expect_taken_soon(wanted);
    resume_replica();
}

INSTANTIATE_TEST_SUITE_P(Modes, ReSend, ::testing::Values(ReplicaSync::required, ReplicaSync::wait),
                         [](const auto& info) { return info.param == ReplicaSync::required ? "required" : "wait"; });

}  // namespace
}  // namespace holdfast::testing
