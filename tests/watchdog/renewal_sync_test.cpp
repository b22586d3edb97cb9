// The watchdog's renewals follow Config::replica_sync as acquires do: a
// renewal only the master saw is lost in a failover, and the promoted
// replica would end the lease before the holder expects. Real master + replica.
#include <mutex>
#include <vector>

#include "replica_fixture.hpp"

namespace holdfast::testing {
namespace {

class RenewalSync : public ReplicatedTest {
protected:
    /// Renewals every 300 ms; WAIT up to `sync_timeout`.
    Config synced(ReplicaSync mode, std::chrono::milliseconds sync_timeout) {
        Config c = config();
        c.replica_sync = mode;
        c.replica_sync_timeout = sync_timeout;
        c.lock_watchdog_timeout = 900ms;
        c.on_event = [this](const Event& e) {
            std::lock_guard lock(mutex);
            if (e.kind == Event::Kind::renewal_failed) renewal_failures.push_back(e);
        };
        return c;
    }
    std::size_t failures() {
        std::lock_guard lock(mutex);
        return renewal_failures.size();
    }

    std::mutex mutex;
    std::vector<Event> renewal_failures;
};

TEST_F(RenewalSync, RenewalsWaitForTheReplica) {
    Client client(synced(ReplicaSync::required, 2500ms));
    Lock lock(client, "renewed");
    lock.lock();
    raw->command({"CONFIG", "RESETSTAT"});
    // No acquire or release from here: every WAIT follows a renewal.
    ASSERT_TRUE(eventually([&] { return calls("wait") >= 3; }, 10s)) << calls("wait") << " WAIT after renewals";
    EXPECT_GE(script_calls(), 3);
    EXPECT_FALSE(lock.lease_lost_token().stop_requested());
    EXPECT_EQ(failures(), 0u);
    lock.unlock();
}

// `required`: renewals the replica does not acknowledge do not count, so the
// holder is told its lease is lost though the master renewed it.
TEST_F(RenewalSync, RequiredLosesALeaseNoReplicaAcknowledgesRenewalsOf) {
    Client client(synced(ReplicaSync::required, 200ms));
    Lock lock(client, "unsynced-renewals");
    lock.lock();
    auto lost = lock.lease_lost_token();
    replica->pause();
    ASSERT_TRUE(eventually([&] { return lost.stop_requested(); }, 10s)) << "still trusted unsynced renewals";
    EXPECT_EQ(raw->string({"HGET", "unsynced-renewals", client.current_owner()}), "1")
        << "the master still holds it: the loss is the replicas' doing";
    ASSERT_GE(failures(), 1u);
    std::lock_guard guard(mutex);
    const Event& failed = renewal_failures.front();
    EXPECT_EQ(failed.name, "unsynced-renewals");
    EXPECT_EQ(failed.owner, client.current_owner());
    EXPECT_NE(failed.detail.find("none of its 1 replica(s)"), std::string::npos) << failed.detail;
    EXPECT_NE(failed.detail.find("127.0.0.1:" + std::to_string(server->port())), std::string::npos) << failed.detail;
}

// `wait`: renewals WAIT, then count however many replicas acknowledged.
TEST_F(RenewalSync, WaitModeKeepsALeaseTheReplicaDoesNotAcknowledge) {
    Client client(synced(ReplicaSync::wait, 100ms));
    Lock lock(client, "best-effort-renewals");
    lock.lock();
    auto lost = lock.lease_lost_token();
    replica->pause();
    raw->command({"CONFIG", "RESETSTAT"});
    ASSERT_TRUE(eventually([&] { return calls("wait") >= 4; }, 10s)) << calls("wait") << " WAIT after renewals";
    EXPECT_FALSE(lost.stop_requested());
    EXPECT_EQ(failures(), 0u);
    replica->resume();
    lock.unlock();
}

}  // namespace
}  // namespace holdfast::testing
