// Connections: Unix sockets, peers that are not Redis, reconnects.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <thread>

#include "redis_fixture.hpp"
#include "transport/command.hpp"
#include "transport/connection.hpp"

namespace holdfast::testing {
namespace {

class UnixSocket : public RedisTest {
protected:
    std::vector<std::string> server_args() override {
        socket_path = "/tmp/holdfast-test-" + std::to_string(::getpid()) + ".sock";
        return {"--unixsocket", socket_path, "--unixsocketperm", "700"};
    }
    void TearDown() override { ::unlink(socket_path.c_str()); }
    std::string socket_path;
};

TEST_F(UnixSocket, LocksOverAUnixSocket) {
    Client client("unix://" + socket_path);
    Lock lock(client, "local");
    lock.lock();
    EXPECT_EQ(raw->string({"HGET", "local", client.current_owner()}), "1");
    lock.unlock();
}

// A TCP peer that answers everything with an HTTP error.
class NotRedis {
public:
    NotRedis() {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
        port = ntohs(addr.sin_port);
        ::listen(fd_, 8);
        thread_ = std::thread([this] {
            for (;;) {
                const int client = ::accept(fd_, nullptr, nullptr);
                if (client < 0) return;
                const char reply[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
                (void)!::write(client, reply, sizeof reply - 1);
                ::close(client);
            }
        });
    }
    ~NotRedis() {
        ::shutdown(fd_, SHUT_RDWR);
        ::close(fd_);
        thread_.join();
    }
    std::uint16_t port = 0;

private:
    int fd_;
    std::thread thread_;
};

TEST(NotARedisServer, IsNamedAsSuch) {
    NotRedis peer;
    Config c;
    c.port = peer.port;
    c.timeout = std::chrono::milliseconds(500);
    try {
        Client client(c);
        FAIL() << "a web server passed for Redis";
    } catch (const ProtocolError& e) {  // not a ConnectionError: retrying cannot help
        const std::string what = e.what();
        EXPECT_EQ(e.code(), errc::protocol_error);
        EXPECT_NE(what.find("127.0.0.1:" + std::to_string(peer.port)), std::string::npos) << what;
        EXPECT_NE(what.find("Redis"), std::string::npos) << what;
    }
}

// A client's own flood (issue 23): the replies come at once, but the client
// is slow to handle them, so commands queued meanwhile are answered later than
// Config::timeout after they were submitted. The server never went silent:
// not a stalled server, and no command fails.
using Flood = RedisTest;

TEST_F(Flood, RepliesLateBehindTheClientsOwnWorkAreNotAStall) {
    asio::io_context io;
    Config c = config();
    c.timeout = std::chrono::milliseconds(400);
    auto connection = std::make_shared<detail::Connection>(io, c);
    connection->start();
    const std::string ping = detail::encode_command({"PING"});
    constexpr int chains = 20, rounds = 3;
    int answered = 0, ended = 0;
    std::vector<std::string> failed;
    std::function<void(int)> send = [&](int round) {
        connection->submit(ping, [&, round](detail::Failure error, detail::Reply) {
            if (error) {
                failed.push_back(error.message());
                return void(++ended);
            }
            ++answered;
            // A busy client: handling a batch's 20 replies takes it 800 ms,
            // and the commands it queues go out after them.
            std::this_thread::sleep_for(std::chrono::milliseconds(40));
            if (round + 1 < rounds) return send(round + 1);
            ++ended;
        });
    };
    for (int i = 0; i < chains; ++i) send(0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (ended < chains && std::chrono::steady_clock::now() < deadline) io.run_for(std::chrono::milliseconds(5));
    connection->stop_now();
    EXPECT_EQ(answered, chains * rounds) << (failed.empty() ? "" : failed.front());
}

// A read is parsed a slice at a time (Connection::on_bytes): a reply larger
// than a slice or a read, and the small ones pipelined around it, come whole
// and in order.
using LargeReplies = RedisTest;

TEST_F(LargeReplies, SpanSlicesAndReadsWhole) {
    asio::io_context io;
    auto connection = std::make_shared<detail::Connection>(io, config());
    connection->start();
    std::string big(300 * 1024, 'x');
    for (std::size_t i = 0; i < big.size(); i += 997) big[i] = static_cast<char>('a' + i % 26);
    connection->submit(detail::encode_command({"SET", "big", big}), [](detail::Failure, detail::Reply) {});
    constexpr int commands = 200;
    std::vector<std::string> got(commands);
    int ended = 0;
    for (int i = 0; i < commands; ++i) {
        const auto command = i % 20 == 0 ? detail::encode_command({"GET", "big"})
                                         : detail::encode_command({"ECHO", std::to_string(i)});
        connection->submit(command, [&, i](detail::Failure error, detail::Reply reply) {
            got[i] = error ? "error: " + error.message() : reply.str;
            ++ended;
        });
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (ended < commands && std::chrono::steady_clock::now() < deadline) io.run_for(std::chrono::milliseconds(5));
    connection->stop_now();
    ASSERT_EQ(ended, commands);
    for (int i = 0; i < commands; ++i) {
        if (i % 20 == 0) EXPECT_TRUE(got[i] == big) << "GET " << i << " came back " << got[i].size() << " bytes";
        else EXPECT_EQ(got[i], std::to_string(i));
    }
}

// The password is rotated while the client is connected (CONFIG SET
// requirepass), then its connections drop: once a reconnect is refused AUTH,
// every command fails at once with AuthError, not after waiting for the next
// reconnect attempt (here 2 s and more apart); the attempts go on, and once
// one succeeds (the old password back) commands run again.
class PasswordRotation : public RedisTest {
protected:
    std::vector<std::string> server_args() override { return {"--requirepass", "old"}; }
    void SetUp() override {
        RedisTest::SetUp();
        raw->command({"AUTH", "old"});
    }
    /// A try_lock's outcome: "auth" (AuthError), "lost" (its connection
    /// dropped under it), "locked", or what else it threw.
    static std::string try_once(Lock& lock) {
        try {
            if (lock.try_lock()) {
                lock.unlock();
                return "locked";
            }
            return "refused";
        } catch (const AuthError&) {
            return "auth";
        } catch (const std::exception& e) {
            return e.what();
        }
    }
};

TEST_F(PasswordRotation, AfterARefusedReconnectCommandsFailAtOnceWithAuthError) {
    Config c = config();
    c.password = "old";
    c.retry_interval = 2s;  // a command that waited for the next attempt would take that long
    c.retry_interval_max = 4s;
    c.timeout = 10s;
    Client client(c);
    Lock lock(client, "door");
    ASSERT_EQ(try_once(lock), "locked");
    raw->command({"CONFIG", "SET", "requirepass", "new"});
    raw->command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
    raw->command({"CLIENT", "KILL", "TYPE", "pubsub"});
    // A command sent before the connection saw the kill is lost with it; the
    // reconnect that follows is refused.
    std::string outcome;
    for (int tries = 0; tries < 3 && outcome != "auth"; ++tries) outcome = try_once(lock);
    ASSERT_EQ(outcome, "auth") << "no AuthError after the password changed";
    for (int i = 0; i < 5; ++i) {
        const auto sent = std::chrono::steady_clock::now();
        EXPECT_EQ(try_once(lock), "auth");
        const auto took = std::chrono::steady_clock::now() - sent;
        EXPECT_LT(took, 1s) << "command " << i << " waited "
                            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                            << " ms for the next reconnect attempt";
    }
    raw->command({"CONFIG", "SET", "requirepass", "old"});
    EXPECT_TRUE(eventually([&] { return try_once(lock) == "locked"; }, 30s)) << "never reconnected";
}

// What runs at the server, from the handshake's rights probe ({may, name,
// version}, as each kind of server's Lua says it: Redis has no SERVER_NAME;
// Valkey 7.2 and 8 say valkey and their own VALKEY_VERSION, their
// REDIS_VERSION being the Redis they are compatible with).
TEST(ServerSoftware, IsReadFromTheRightsProbe) {
    auto probe = [](std::vector<detail::Reply> elements) {
        detail::Reply reply;
        reply.type = detail::Reply::Type::array;
        reply.elements = std::move(elements);
        return detail::software_of(reply);
    };
    auto text = [](const std::string& s) {
        detail::Reply reply;
        reply.type = detail::Reply::Type::string;
        reply.str = s;
        return reply;
    };
    detail::Reply yes;
    yes.type = detail::Reply::Type::integer;
    yes.integer = 1;
    EXPECT_EQ(probe({yes, text("redis"), text("7.0.15")}), "Redis 7.0.15");
    EXPECT_EQ(probe({yes, text("valkey"), text("8.0.1")}), "Valkey 8.0.1");
    EXPECT_EQ(probe({yes, text("keydb"), text("6.3.4")}), "keydb 6.3.4");
    // The probe's old form (a bare integer), or a refusal: nothing is known.
    EXPECT_EQ(detail::software_of(yes), "");
    detail::Reply refused;
    refused.type = detail::Reply::Type::error;
    refused.str = "NOPERM User u has no permissions to run the 'eval_ro' command";
    EXPECT_EQ(detail::software_of(refused), "");
}

// The client tells `connected` once per server, naming what runs there (a
// pool of two and a pub/sub connection: one event), and `connection_restored`
// names it again after a loss; holdfast::inspect() (holdfast status) gives it
// for each name.
using ConnectedEvent = RedisTest;

TEST_F(ConnectedEvent, NamesTheServerAndItsVersionOncePerServer) {
    const std::string software = server_software();
    std::mutex mutex;
    std::vector<Event> told;
    Config c = config();
    c.on_event = [&](const Event& event) {
        std::lock_guard lock(mutex);
        told.push_back(event);
    };
    auto of_kind = [&](Event::Kind kind) {
        std::lock_guard lock(mutex);
        std::vector<Event> found;
        for (const auto& e : told)
            if (e.kind == kind) found.push_back(e);
        return found;
    };
    Client client(c);
    Lock lock(client, "door");
    lock.lock();
    lock.unlock();
    const std::string server_name = "127.0.0.1:" + std::to_string(server->port());
    ASSERT_TRUE(eventually([&] { return !of_kind(Event::Kind::connected).empty(); }));
    const auto connected = of_kind(Event::Kind::connected);
    ASSERT_EQ(connected.size(), 1u) << connected.back().to_string();
    EXPECT_EQ(connected[0].server, server_name);
    EXPECT_EQ(connected[0].detail, software);
    EXPECT_EQ(connected[0].to_string(), "holdfast: connected: on " + server_name + ": " + software);

    raw->command({"CLIENT", "KILL", "SKIPME", "yes"});
    // Each connection for commands names it again (the pub/sub one cannot say).
    EXPECT_TRUE(eventually([&] {
        const auto restored = of_kind(Event::Kind::connection_restored);
        return std::any_of(restored.begin(), restored.end(), [&](const Event& e) { return e.detail == software; });
    }));
    EXPECT_EQ(of_kind(Event::Kind::connected).size(), 1u) << "a reconnect is not a first connection";

    const LockState state = inspect(client, "door");
    EXPECT_EQ(state.server, server_name);
    EXPECT_EQ(state.server_version, software);
}

// A user without INFO (nor anything beyond what docs/errors.md grants): the
// version is known all the same, and nothing the client asked was refused.
TEST_F(ConnectedEvent, NeedsNoRightBeyondTheLocks) {
    raw->command({"ACL", "SETUSER", "noinfo", "on", ">pw", "~*", "&*", "+@all", "-info", "-hello"});
    raw->command({"ACL", "LOG", "RESET"});
    std::mutex mutex;
    std::vector<Event> connected;
    Config c = config();
    c.username = "noinfo";
    c.password = "pw";
    c.on_event = [&](const Event& event) {
        std::lock_guard lock(mutex);
        if (event.kind == Event::Kind::connected) connected.push_back(event);
    };
    Client client(c);
    Lock lock(client, "door");
    ASSERT_TRUE(lock.try_lock());
    lock.unlock();
    {
        std::lock_guard guard(mutex);
        ASSERT_EQ(connected.size(), 1u);
        EXPECT_EQ(connected[0].detail, server_software());
    }
    EXPECT_EQ(raw->command({"ACL", "LOG"})->elements, 0u) << "the client asked what the user may not";
}
}  // namespace
}  // namespace holdfast::testing
