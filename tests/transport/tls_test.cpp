// TLS (rediss://): locks, pub/sub wake-ups and renewals over TLS, and each way
// a certificate or port can be wrong, against a TLS redis-server with
// certificates the test makes.
#include <atomic>
#include <future>
#include <thread>

#include "redis_fixture.hpp"
#include "test_certs.hpp"
#include "transport/command.hpp"
#include "transport/connection.hpp"

namespace holdfast::testing {
namespace {

class Tls : public ::testing::Test {
protected:
    void SetUp() override {
        server = start_server(false);
        raw = std::make_unique<support::SyncRedis>(server->port());
    }

    std::unique_ptr<support::RedisServer> start_server(bool auth_clients) const {
        return std::make_unique<support::RedisServer>(
            support::TlsServer{certs.server_cert, certs.server_key, certs.ca, auth_clients});
    }

    /// The TLS port, trusting the test CA.
    Config config(const support::RedisServer& on) const {
        Config c = Config::from_uri(on.tls_url());
        c.tls.ca_file = certs.ca;
        return c;
    }
    Config config() const { return config(*server); }

    /// What a lock taken with `c` fails with, and how soon.
    template <class Error>
    std::pair<std::string, std::chrono::steady_clock::duration> lock_fails(const Config& c) {
        const auto start = std::chrono::steady_clock::now();
        try {
            Client client(c);
            Lock lock(client, "door");
            lock.lock();
            ADD_FAILURE() << "locked; expected an error";
        } catch (const Error& e) {
            return {e.what(), std::chrono::steady_clock::now() - start};
        }
        return {};
    }

    support::TestCerts certs;
    std::unique_ptr<support::RedisServer> server;
    std::unique_ptr<support::SyncRedis> raw;
};

TEST_F(Tls, LockIsTakenAndReleased) {
    Client client(config());
    Lock lock(client, "door");
    lock.lock();
    EXPECT_EQ(raw->string({"HGET", "door", client.current_owner()}), "1");
    lock.unlock();
    EXPECT_EQ(raw->integer({"EXISTS", "door"}), 0);
}

// The holder's lease is 30 s: a waiter through within seconds was woken by
// the unlock message, which reached it over the TLS pub/sub connection.
TEST_F(Tls, UnlockMessageWakesAWaiter) {
    Client holder_client(config()), waiter_client(config());
    Lock held(holder_client, "door"), wanted(waiter_client, "door");
    held.lock();
    auto waiter = std::async(std::launch::async, [&] {
        const bool got = wanted.try_lock_for(std::chrono::seconds(25));
        const auto at = std::chrono::steady_clock::now();
        if (got) wanted.unlock();
        return std::make_pair(got, at);
    });
    ASSERT_TRUE(eventually([&] {
        return raw->command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{door}"})->element[1]->integer == 1;
    }));
    const auto unlocked = std::chrono::steady_clock::now();
    held.unlock();
    ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    auto [got, at] = waiter.get();
    EXPECT_TRUE(got);
    EXPECT_LT(at - unlocked, std::chrono::seconds(3));
}

TEST_F(Tls, WatchdogRenewsTheLease) {
    Config c = config();
    c.lock_watchdog_timeout = std::chrono::milliseconds(1500);
    Client client(c);
    Lock lock(client, "kept");
    lock.lock();
    const auto start = std::chrono::steady_clock::now();
    long long lowest = 1500, last = 0;
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(4000)) {
        last = raw->integer({"PTTL", "kept"});
        lowest = std::min(lowest, last);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_GT(lowest, 0) << "the lock expired while held";
    EXPECT_GT(last, 0);
    lock.unlock();
}

// The calling thread encrypts and sends its command itself, as on a plain
// connection: it reaches the server while the loop thread is busy (blocked in
// a handler here). Handed to the loop thread, it would wait for it.
TEST_F(Tls, CommandGoesOutWhileTheLoopThreadIsBusy) {
    asio::io_context io;
    auto guard = asio::make_work_guard(io);
    auto connection = std::make_shared<detail::Connection>(io, config());
    connection->start();
    std::thread loop([&] { io.run(); });
    std::promise<void> ready;
    connection->submit(detail::encode_command({"PING"}), [&](std::exception_ptr, detail::Reply) { ready.set_value(); });
    EXPECT_EQ(ready.get_future().wait_for(10s), std::future_status::ready);

    std::promise<void> unblock;
    asio::post(io, [done = unblock.get_future().share()] { done.wait(); });
    std::promise<void> answered;
    connection->submit(detail::encode_command({"SET", "sent-by-caller", "1"}),
                       [&](std::exception_ptr, detail::Reply) { answered.set_value(); });
    EXPECT_TRUE(eventually([&] { return raw->integer({"EXISTS", "sent-by-caller"}) == 1; }))
        << "the command waited for the loop thread";
    unblock.set_value();
    EXPECT_EQ(answered.get_future().wait_for(10s), std::future_status::ready);
    asio::post(io, [&] { connection->stop_now(); });
    guard.reset();
    loop.join();
}

// Many threads writing through one Client's TLS connections at once while
// the loop thread decrypts replies: every pair completes, in order per lock.
TEST_F(Tls, ManyThreadsLockAndUnlockAtOnce) {
    Client client(config());
    std::vector<std::thread> threads;
    std::atomic<int> pairs{0};
    for (int t = 0; t < 16; ++t)
        threads.emplace_back([&, t] {
            Lock lock(client, "busy:" + std::to_string(t));
            for (int i = 0; i < 200; ++i) {
                lock.lock();
                lock.unlock();
                ++pairs;
            }
        });
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(pairs.load(), 16 * 200);
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(Tls, UntrustedCertificateFailsAtOnceSayingWhy) {
    Config c = config();
    c.tls.ca_file = certs.other_ca;
    c.timeout = std::chrono::seconds(20);
    const auto [what, took] = lock_fails<TlsError>(c);
    EXPECT_NE(what.find("127.0.0.1:" + std::to_string(server->tls_port())), std::string::npos) << what;
    // The server sends its CA along, so OpenSSL finds a self-signed root it does not trust.
    EXPECT_NE(what.find("certificate verify failed: self-signed certificate"), std::string::npos) << what;
    EXPECT_NE(what.find("TlsConfig::ca_file (--tls-ca)"), std::string::npos) << what;
    EXPECT_LT(took, std::chrono::seconds(5)) << "waited for the timeout; retrying cannot fix a certificate";
}

// A certificate out of its dates, signed by a trusted CA: the advice is to
// renew it or check the clock, not to give another CA.
TEST_F(Tls, ExpiredCertificateIsToldToBeRenewed) {
    support::RedisServer expired(support::TlsServer{
        certs.server_cert_valid("20200101000000Z", "20200102000000Z"), certs.server_key, certs.ca, false});
    Config c = config(expired);
    c.timeout = 20s;
    const auto [what, took] = lock_fails<TlsError>(c);
    for (const std::string& part :
         {"127.0.0.1:" + std::to_string(expired.tls_port()), std::string("the server's certificate has expired"),
          std::string("certificate verify failed: certificate has expired"),
          std::string("until Jan  2 00:00:00 2020 GMT"), std::string("renew it"), std::string("clock")})
        EXPECT_NE(what.find(part), std::string::npos) << part << " missing in: " << what;
    EXPECT_EQ(what.find("ca_file"), std::string::npos) << what;
    EXPECT_LT(took, c.timeout) << "waited for the timeout; retrying cannot fix a certificate";
}

TEST_F(Tls, NotYetValidCertificateIsToldToCheckTheClock) {
    support::RedisServer early(support::TlsServer{certs.server_cert_valid("20900101000000Z", "20910101000000Z"),
                                                  certs.server_key, certs.ca, false});
    const auto [what, took] = lock_fails<TlsError>(config(early));
    for (const std::string& part : {std::string("the server's certificate is not valid yet"),
                                    std::string("certificate verify failed: certificate is not yet valid"),
                                    std::string("valid from Jan  1 00:00:00 2090 GMT"), std::string("clock")})
        EXPECT_NE(what.find(part), std::string::npos) << part << " missing in: " << what;
    EXPECT_EQ(what.find("ca_file"), std::string::npos) << what;
}

TEST_F(Tls, WrongServerNameIsRefused) {
    Config c = config();
    c.tls.server_name = "redis.example.com";
    const auto [what, took] = lock_fails<TlsError>(c);
    EXPECT_NE(what.find("does not name 'redis.example.com'"), std::string::npos) << what;
    EXPECT_NE(what.find("hostname mismatch"), std::string::npos) << what;
    // A name the certificate carries (its DNS:localhost) is accepted, and sent as SNI.
    c.tls.server_name = "localhost";
    Client client(c);
    Lock lock(client, "door");
    lock.lock();
    lock.unlock();
}

TEST_F(Tls, ClientCertificateWhenTheServerDemandsOne) {
    auto strict = start_server(true);
    Config c = config(*strict);
    c.tls.cert_file = certs.client_cert;
    c.tls.key_file = certs.client_key;
    {
        Client client(c);
        Lock lock(client, "door");
        lock.lock();
        lock.unlock();
    }
    const auto [what, took] = lock_fails<TlsError>(config(*strict));
    EXPECT_NE(what.find("client certificate"), std::string::npos) << what;
    EXPECT_NE(what.find("--tls-cert"), std::string::npos) << what;
}

TEST_F(Tls, VerifyFalseAcceptsAnyCertificate) {
    Config c = config();
    c.tls.ca_file = certs.other_ca;
    c.tls.verify = false;
    Client client(c);
    Lock lock(client, "door");
    lock.lock();
    lock.unlock();
}

TEST_F(Tls, UnreadableFilesFailTheClientNamingTheFile) {
    Config c = config();
    c.tls.ca_file = certs.dir + "/missing-ca.pem";
    try {
        Client client(c);
        ADD_FAILURE() << "a client with a missing CA file";
    } catch (const TlsError& e) {
        EXPECT_NE(std::string(e.what()).find("missing-ca.pem"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
    }
    c = config();
    c.tls.cert_file = certs.client_cert;
    c.tls.key_file = certs.server_key;  // not this certificate's key
    EXPECT_THROW(Client{c}, TlsError);
}

TEST_F(Tls, PlainClientAtTheTlsPortIsToldToUseRediss) {
    Config c;
    c.port = server->tls_port();
    c.timeout = std::chrono::milliseconds(1500);
    const auto [what, took] = lock_fails<ConnectionError>(c);
    EXPECT_NE(what.find("use rediss://"), std::string::npos) << what;
}

TEST_F(Tls, TlsClientAtAPlainPortIsToldItIsNotTls) {
    Config c = Config::from_uri("rediss://127.0.0.1:" + std::to_string(server->port()));
    c.tls.ca_file = certs.ca;
    c.connect_timeout = std::chrono::milliseconds(500);
    c.timeout = std::chrono::milliseconds(1500);
    const auto [what, took] = lock_fails<ConnectionError>(c);
    EXPECT_NE(what.find("TLS"), std::string::npos) << what;
    EXPECT_NE(what.find("redis://"), std::string::npos) << what;
}

}  // namespace
}  // namespace holdfast::testing
