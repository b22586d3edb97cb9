// Bad-input catalog, servers: refused credentials, a peer that is not Redis,
// one that stops answering or closes mid-reply, one that is out of memory.
// Each is a ConnectionError / AuthError / ServerError that names the server
// and says what to do, and no call leaves a renewal, a listener or a key.
#include "bad_inputs/bad_inputs.hpp"

namespace holdfast::testing {
namespace {

using Answer = FakeServer::Answer;
using Request = std::vector<std::string>;

/// Constructs a Client on another thread: a hang fails the test instead of stopping it.
std::future<void> connect(const Config& config) {
    return std::async(std::launch::async, [config] { Client client(config); });
}

class Passwords : public BadInputs {
protected:
    std::vector<std::string> server_args() override { return {"--requirepass", "s3cret"}; }
    void SetUp() override {
        BadInputs::SetUp();
        raw->command({"AUTH", "s3cret"});
    }
    /// Connections the server has, besides the raw one: a failed Client leaves none.
    long long others_connected() const {
        const std::string info = raw->string({"INFO", "clients"});
        const auto at = info.find("connected_clients:");
        return std::stoll(info.substr(at + 18)) - 1;
    }
};

TEST_F(Passwords, AWrongPasswordIsAnAuthError) {
    Config c = config();
    c.password = "wrong";
    auto client = connect(c);
    EXPECT_TRUE(mentions(error_of<AuthError>(client, 20s, errc::auth_refused),
                         {server_name(), "AUTH refused", "WRONGPASS", "password"}));
    EXPECT_TRUE(eventually([&] { return others_connected() == 0; })) << "connections left open";
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(Passwords, AnUnknownUserIsAnAuthError) {
    Config c = config();
    c.username = "ghost";
    c.password = "s3cret";
    auto client = connect(c);
    EXPECT_TRUE(mentions(error_of<AuthError>(client, 20s, errc::auth_refused),
                         {server_name(), "AUTH refused", "user name and password"}));
    EXPECT_TRUE(eventually([&] { return others_connected() == 0; })) << "connections left open";
}

TEST_F(Passwords, NoPasswordForAServerThatWantsOneIsAnAuthError) {
    auto client = connect(config());
    EXPECT_TRUE(mentions(error_of<AuthError>(client, 20s, errc::auth_refused), {server_name(), "NOAUTH", "password"}));
    EXPECT_TRUE(eventually([&] { return others_connected() == 0; })) << "connections left open";
}

using Servers = BadInputs;

TEST_F(Servers, APasswordForAServerWithoutOneIsAnAuthError) {
    Config c = config();
    c.password = "s3cret";
    auto client = connect(c);
    EXPECT_TRUE(
        mentions(error_of<AuthError>(client, 20s, errc::auth_refused), {server_name(), "AUTH refused", "password"}));
}

TEST_F(Servers, ADatabaseOutOfRangeIsRefusedAtConnect) {
    Config c = config();
    c.database = 99;
    auto client = connect(c);
    EXPECT_TRUE(mentions(error_of<AuthError>(client, 20s, errc::auth_refused),
                         {server_name(), "DB index is out of range", "database"}));
}

TEST_F(Servers, NobodyListeningIsAConnectionError) {
    Config c = config();
    c.port = support::free_port();
    c.timeout = 500ms;
    auto client = connect(c);
    EXPECT_TRUE(mentions(error_of<ConnectionError>(client, 20s, errc::not_connected),
                         {"127.0.0.1:" + std::to_string(c.port), "refused", "is the server running"}));
}

TEST_F(Servers, AMissingUnixSocketIsAConnectionError) {
    Config c;
    c.unix_socket = server->dir() + "/no-such.sock";
    c.timeout = 500ms;
    auto client = connect(c);
    EXPECT_TRUE(mentions(error_of<ConnectionError>(client), {c.unix_socket, "No such file"}));
}

// A ProtocolError (not a ConnectionError: retrying cannot help), and at once:
// only the failure itself fails the waiting commands with that type (the
// timeout would give a plain ConnectionError).
TEST_F(Servers, AWebServerIsNamedAsNotRedis) {
    FakeServer web = FakeServer::http();
    Config c = config();
    c.port = web.port();
    c.timeout = 60s;
    auto client = connect(c);
    EXPECT_TRUE(mentions(error_of<ProtocolError>(client, 20s, errc::protocol_error),
                         {web.name(), "not RESP", "is this a Redis server?"}));
    EXPECT_GE(web.accepted(), 1);
}

TEST_F(Servers, APausedServerIsAReplyTimeout) {
    Config c = config();
    c.timeout = 500ms;
    Client client(c);
    Lock lock(client, "job");
    server->pause();
    const std::string what = error_of<ReplyTimeoutError>([&] { lock.lock(); }, errc::reply_timeout);
    server->resume();
    EXPECT_TRUE(mentions(what, {server_name(), "no reply within 500 ms", "may or may not have run"})) << what;
}

TEST_F(Servers, APeerThatNeverAnswersIsAConnectionError) {
    FakeServer silent(FakeServer::Mode::raw, [](const Request&) { return Answer{}; });
    Config c = config();
    c.port = silent.port();
    c.timeout = 500ms;
    auto client = connect(c);
    // Two timers race to report it, both after 500 ms: the reply timeout of
    // the handshake's PING, or the constructor's PING waiting for a connection.
    const std::string what = error_of<ConnectionError>(client);
    EXPECT_TRUE(mentions(what, {silent.name(), "within 500 ms"}));
    EXPECT_TRUE(mentions(what, {"no reply within 500 ms"}) || mentions(what, {"no answer to the handshake"})) << what;
}

// ROLE's answer of a master without replicas (the handshake asks it).
constexpr const char* role_master = "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n";

// Speaks enough RESP for the handshake, then cuts its reply to the first
// script call short and closes: the acquire may or may not have run.
class CutShort : public BadInputs, public ::testing::WithParamInterface<const char*> {};

TEST_P(CutShort, AnAcquireIsAConnectionErrorAndLeavesNothing) {
    FakeServer peer(FakeServer::Mode::resp, [](const Request& request) {
        if (request.at(0) == "PING") return Answer{"+PONG\r\n"};
        if (request.at(0) == "CLIENT") return Answer{"+OK\r\n"};  // SETNAME
        if (request.at(0) == "ROLE") return Answer{role_master};
        if (request.at(0) == "EVAL_RO") return Answer{":0\r\n"};  // the rights probe: may not ask them
        return Answer{GetParam(), true};
    });
    Config c = config();
    c.port = peer.port();
    Client client(c);
    Lock lock(client, "job");
    const std::vector<std::string> expected{peer.name(), "closed the connection", "may or may not have run"};
    EXPECT_TRUE(mentions(error_of<ConnectionError>([&] { lock.lock(); }, errc::connection_lost), expected));
    auto waiting = lock.async_try_lock(client.new_owner(), 30s);
    EXPECT_TRUE(mentions(error_of<ConnectionError>(waiting, 20s, errc::connection_lost), expected));
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
    EXPECT_EQ(detail::core_of(client).transport.subscriber().channel_count(), 0u);
}

INSTANTIATE_TEST_SUITE_P(BadInputs, CutShort, ::testing::Values("$10\r\nabc", "*2\r\n:1\r\n", ":12", "-ERR half"),
                         [](const auto& info) { return "reply" + std::to_string(info.index); });

// The acquire succeeds; the reply to the release is cut short. The outcome
// is unknown, so renewal stops and the lease ends the hold.
TEST_F(Servers, AReleaseCutShortStopsTheRenewal) {
    std::atomic<int> scripts{0};
    FakeServer peer(FakeServer::Mode::resp, [&](const Request& request) {
        if (request.at(0) == "PING") return Answer{"+PONG\r\n"};
        if (request.at(0) == "CLIENT") return Answer{"+OK\r\n"};  // SETNAME
        if (request.at(0) == "ROLE") return Answer{role_master};
        if (request.at(0) == "EVAL_RO") return Answer{":0\r\n"};  // the rights probe: may not ask them
        if (++scripts == 1) return Answer{"$-1\r\n"};  // nil: acquired
        return Answer{"$1\r\n", true};
    });
    Config c = config();
    c.port = peer.port();
    Client client(c);
    Lock lock(client, "job");
    lock.lock();
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 1u);
    EXPECT_TRUE(mentions(error_of<ConnectionError>([&] { lock.release(); }),
                         {peer.name(), "closed the connection", "may or may not have run"}));
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u) << "a hold of unknown state is still renewed";
    EXPECT_EQ(detail::core_of(client).transport.subscriber().channel_count(), 0u);
}

TEST_F(FullServer, AnAcquireIsAServerErrorNamingTheCause) {
    Client client(config());
    Lock lock(client, "job");
    const long long keys = fill();
    const std::vector<std::string> expected{"'job'", server_name(), "OOM", "out of memory",
                                            "free memory or raise maxmemory"};
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { lock.lock(); }), expected));
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { lock.try_lock_for(30s); }), expected));
    expect_nothing_left(client, keys);
}

// Releasing frees memory, so a full server must not keep a lock held until
// its lease runs out: the last unlock deletes the key.
TEST_F(FullServer, TheLastUnlockStillReleases) {
    Client client(config());
    Lock lock(client, "job");
    lock.lock();
    const long long keys = fill();
    lock.unlock();
    expect_nothing_left(client, keys);
}

}  // namespace
}  // namespace holdfast::testing
