// A hold whose lease could not be renewed is lost at its local deadline:
// the holder is told before the server's lease can run out, so before anyone
// else can take the lock.
#include <atomic>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"
#include "tcp_proxy.hpp"

namespace holdfast::testing {
namespace {

using LocalDeadline = RedisTest;

// Records when a hold's lost-lease token fires, and what the server still
// had of the lock at that moment (on a connection of its own).
class LossWitness {
public:
    LossWitness(std::uint16_t port, const std::string& key, std::stop_token lost)
        : look_(port), key_(key), callback_(std::move(lost), [this] {
              // Looked at first, so that a test seeing told() also sees the PTTL.
              pttl_when_told_ = look_.integer({"PTTL", key_});
              told_ = true;
          }) {}

    bool told() const { return told_; }
    /// The lock's PTTL on the server when the holder was told (-2: gone already).
    long long pttl_when_told() const { return pttl_when_told_; }

private:
    support::SyncRedis look_;
    std::string key_;
    std::atomic<bool> told_{false};
    std::atomic<long long> pttl_when_told_{-3};
    std::stop_callback<std::function<void()>> callback_;
};

// The holder reaches Redis through a proxy that is then frozen: its renewals
// get no answer while another client reaches the server directly.
TEST_F(LocalDeadline, PartitionedHolderIsToldBeforeAnotherCanTakeTheLock) {
    support::TcpProxy proxy(server->port());
    Config cut_off = config();
    cut_off.port = proxy.port();
    cut_off.lock_watchdog_timeout = 1500ms;
    Client holder(cut_off);
    Lock held(holder, "ledger");
    held.lock();
    LossWitness witness(server->port(), "ledger", held.lease_lost_token());
    proxy.freeze();

    Client other(config());
    Lock taken(other, "ledger");
    ASSERT_TRUE(taken.try_lock_for(10s));
    EXPECT_TRUE(witness.told()) << "another owner took the lock while its partitioned holder was still untold";
    EXPECT_GT(witness.pttl_when_told(), 0) << "told only after the server's lease had run out";
    taken.unlock();

    proxy.heal();
    EXPECT_THROW(held.release(), LeaseLostError);
    EXPECT_EQ(detail::core_of(holder).watchdog.tracked(), 0u);
}

// The holder's ACL user loses its script rights mid-hold: every renewal is
// refused (NOPERM), which must not keep the hold alive locally.
TEST_F(LocalDeadline, RenewalsRefusedByTheServerEndTheHold) {
    raw->command({"ACL", "SETUSER", "holder", "on", ">pw", "~*", "&*", "+@all"});
    Config c = config();
    c.username = "holder";
    c.password = "pw";
    c.lock_watchdog_timeout = 1500ms;
    Client holder(c);
    Lock held(holder, "ledger");
    held.lock();
    LossWitness witness(server->port(), "ledger", held.lease_lost_token());
    raw->command({"ACL", "SETUSER", "holder", "-evalsha", "-eval"});

    ASSERT_TRUE(eventually([&] { return witness.told(); }, 10s));
    EXPECT_GT(witness.pttl_when_told(), 0) << "told only after the server's lease had run out";
    EXPECT_FALSE(detail::core_of(holder).watchdog.renews("ledger", holder.current_owner()));
    raw->command({"ACL", "SETUSER", "holder", "+@all"});
    EXPECT_THROW(held.release(), LeaseLostError);
    EXPECT_EQ(raw->integer({"EXISTS", "ledger"}), 0);
}

// An explicit lease is not renewed, but it is watched the same way: the
// holder is told just before it ends.
TEST_F(LocalDeadline, ExplicitLeaseIsToldBeforeItEnds) {
    Client client(config());
    Lock lock(client, "ledger");
    lock.lock(1200ms);
    EXPECT_FALSE(detail::core_of(client).watchdog.renews("ledger", client.current_owner()));
    LossWitness witness(server->port(), "ledger", lock.lease_lost_token());
    ASSERT_TRUE(eventually([&] { return witness.told(); }));
    EXPECT_GT(witness.pttl_when_told(), 0) << "told only after the server's lease had run out";
    EXPECT_THROW(lock.release(), LeaseLostError);
}

// A nested lock(lease) sets the lock's TTL to that lease, as Redisson's does,
// shortening a watchdog hold until its next renewal: the holder is told at
// the shorter lease's deadline, not left to find out ten seconds later.
TEST_F(LocalDeadline, NestedShortLeaseShortensAWatchdogHold) {
    Config c = config();
    c.lock_watchdog_timeout = 6000ms;  // first renewal 2 s after the hold: after the nested lease ends
    Client client(c);
    Lock lock(client, "ledger");
    lock.lock();
    lock.lock(300ms);
    LossWitness witness(server->port(), "ledger", lock.lease_lost_token());
    ASSERT_TRUE(eventually([&] { return witness.told(); }, 1500ms));
    EXPECT_GT(witness.pttl_when_told(), 0) << "told only after the server's lease had run out";
    EXPECT_THROW(lock.release(), LeaseLostError);
    EXPECT_THROW(lock.release(), NotOwnerError);
    EXPECT_TRUE(eventually([&] { return raw->integer({"EXISTS", "ledger"}) == 0; }));
}

// Renewals that go through keep the local deadline moving: a healthy hold is
// never reported lost, however long it lasts.
TEST_F(LocalDeadline, ConfirmedRenewalsKeepTheHold) {
    Config c = config();
    c.lock_watchdog_timeout = 600ms;
    Client client(c);
    Lock lock(client, "ledger");
    lock.lock();
    auto lost = lock.lease_lost_token();
    const long long renewals_before = script_calls();
    // Five leases' worth of renewals (one every 200 ms), counted on the server.
    ASSERT_TRUE(eventually([&] { return script_calls() >= renewals_before + 15; }, 20s));
    EXPECT_FALSE(lost.stop_requested());
    lock.unlock();
}

}  // namespace
}  // namespace holdfast::testing
