// Sentinel over TLS (rediss-sentinel://): the sentinels are asked over TLS,
// the master is reached on its TLS port, and a failover is followed, against
// a group whose every link (replication, sentinels) is TLS.
#include "redis_fixture.hpp"
#include "sentinel_group.hpp"
#include "test_certs.hpp"

namespace holdfast::testing {
namespace {

class SentinelTls : public ::testing::Test {
protected:
    Config config(const std::string& ca) const {
        Config c = Config::from_uri(group.url());
        c.tls.ca_file = ca;
        c.timeout = 10s;
        return c;
    }
    support::TestCerts certs;
    support::SentinelGroup group{"tls-master", {}, support::TlsServer{certs.server_cert, certs.server_key, certs.ca}};
};

TEST_F(SentinelTls, LocksOnTheMasterAndFollowsAFailover) {
    ASSERT_TRUE(group.url().starts_with("rediss-sentinel://"));
    Client client(config(certs.ca));
    Lock lock(client, "tls-orders");
    lock.lock();
    support::SyncRedis master(group.master_port());
    EXPECT_EQ(master.string({"HGET", "tls-orders", client.current_owner()}), "1");
    lock.unlock();

    const auto old_port = group.master_port();
    const auto new_port = group.failover();
    ASSERT_NE(new_port, old_port);
    // `required` (the default): not before the new master has its replica (LostReplica).
    support::SentinelGroup::wait_for_replicas(new_port, 1);
    Lock after(client, "tls-after-failover");
    after.lock();
    support::SyncRedis now(new_port);
    EXPECT_EQ(now.string({"HGET", "tls-after-failover", client.current_owner()}), "1");
    after.unlock();
}

TEST_F(SentinelTls, AnUntrustedSentinelCertificateFailsTheClientSayingSo) {
    try {
        Client client(config(certs.other_ca));
        FAIL() << "connected to sentinels whose certificate no trusted CA signed";
    } catch (const TlsError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("'tls-master'"), std::string::npos) << what;
        EXPECT_NE(what.find("127.0.0.1:" + std::to_string(group.sentinels[0]->tls_port())), std::string::npos) << what;
        EXPECT_NE(what.find("not trusted"), std::string::npos) << what;
        EXPECT_NE(what.find("--tls-ca"), std::string::npos) << what;
    }
}

}  // namespace
}  // namespace holdfast::testing
