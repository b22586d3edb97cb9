// A program's view of holdfast's errors on a real server: it catches
// holdfast::Error and branches on code(), never on what() nor on which class
// it caught; and a retry loop that catches ConnectionError retries only what
// retrying can fix.
#include <future>
#include <sstream>
#include <system_error>

#include "core/client_core.hpp"
#include "errors/failure.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

/// What a program sees of a failure: its code, and whether its retry loop
/// (catch ConnectionError) would try again.
struct Caught {
    std::error_code code;
    bool retried = false;
    std::string what;
};

Caught caught_from(const std::function<void()>& call) {
    try {
        call();
    } catch (const Error& e) {
        return {e.code(), dynamic_cast<const ConnectionError*>(&e) != nullptr, e.what()};
    }
    ADD_FAILURE() << "did not throw";
    return {};
}

/// What the program does next: each code a branch of its own.
std::string next_step(const std::error_code& code) {
    if (code == errc::wrong_type) return "pick another name";
    if (code == errc::no_permission) return "grant the rights";
    if (code == errc::client_closed) return "stop";
    if (code == errc::auth_refused) return "fix the credentials";
    if (code == errc::connection_lost) return "check, then retry";
    return "unknown: " + code.message();
}

using ErrorCodes = RedisTest;

TEST_F(ErrorCodes, AKeyOfAnotherTypeIsWrongType) {
    raw->command({"SET", "door", "a string"});
    Client client(config());
    Lock lock(client, "door");
    const Caught e = caught_from([&] { lock.lock(); });
    EXPECT_EQ(next_step(e.code), "pick another name") << e.what;
    EXPECT_FALSE(e.retried) << e.what;
    EXPECT_EQ(raw->string({"GET", "door"}), "a string");
}

TEST_F(ErrorCodes, AnAclRefusalIsNoPermission) {
    // Every command and key, no channel: the lock's release could not publish.
    raw->command({"ACL", "SETUSER", "nochannels", "on", ">pw", "~*", "+@all", "resetchannels"});
    Config c = config();
    c.username = "nochannels";
    c.password = "pw";
    Client client(c);
    Lock lock(client, "door");
    const Caught e = caught_from([&] { lock.lock(); });
    EXPECT_EQ(next_step(e.code), "grant the rights") << e.what;
    EXPECT_FALSE(e.retried) << e.what;
    EXPECT_EQ(raw->integer({"EXISTS", "door"}), 0);
}

// Inside a script, a call the ACL refuses is answered "ERR The user executing
// the script can't ..." by Redis 7.0 and "ERR ACL failure in script: ..." by
// 7.2 and later: no_permission on each (every server's texts:
// tests/errors/acl_refusal_test.cpp).
TEST_F(ErrorCodes, AScriptsCallRefusedByTheAclIsNoPermission) {
    raw->command({"ACL", "SETUSER", "nochannels", "on", ">pw", "~*", "+@all", "resetchannels"});
    Config c = config();
    c.username = "nochannels";
    c.password = "pw";
    Client client(c);
    std::promise<detail::Reply> answered;
    detail::core_of(client).transport.execute(
        "door", {"EVAL", "return redis.call('publish', 'door-channel', 'm')", "0"},
        [&answered](detail::Failure error, detail::Reply reply) {
            EXPECT_FALSE(error) << error.message();
            answered.set_value(std::move(reply));
        });
    auto reply = answered.get_future();
    ASSERT_EQ(reply.wait_for(20s), std::future_status::ready);
    const detail::Reply refused = reply.get();
    ASSERT_TRUE(refused.is_error()) << refused.describe();
    const detail::Failure failure = detail::Failure::server(std::string(refused.code()), refused.str);
    EXPECT_EQ(next_step(failure.code()), "grant the rights") << refused.str;
    EXPECT_EQ(failure.reply_code(), "NOPERM") << refused.str;
}

TEST_F(ErrorCodes, AWaiterWhoseClientClosesIsClientClosed) {
    Client holder(config());
    Lock held(holder, "door");
    held.lock();
    auto waiter_client = std::make_unique<Client>(config());
    Lock wanted(*waiter_client, "door");
    auto waiter = std::async(std::launch::async, [&] { return caught_from([&] { wanted.lock(); }); });
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{door}") == 1; }));
    waiter_client.reset();
    ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready) << "the waiter is still parked";
    const Caught e = waiter.get();
    EXPECT_EQ(next_step(e.code), "stop") << e.what;
    EXPECT_FALSE(e.retried) << e.what;
    held.unlock();
}

TEST_F(ErrorCodes, RefusedCredentialsAreAuthRefused) {
    raw->command({"ACL", "SETUSER", "someone", "on", ">right", "~*", "+@all", "&*"});
    Config c = config();
    c.username = "someone";
    c.password = "wrong";
    const Caught e = caught_from([&] { Client client(c); });
    EXPECT_EQ(next_step(e.code), "fix the credentials") << e.what;
    EXPECT_FALSE(e.retried) << "a retry loop would retry refused credentials: " << e.what;
}

// The server holds the acquire unanswered (CLIENT PAUSE WRITE postpones
// scripts), then drops the connection it came on: the acquire may or may not
// have run. That is the one failure here retrying may fix, and it does.
TEST_F(ErrorCodes, ADroppedConnectionIsConnectionLost) {
    Config c = config();
    c.timeout = 30s;  // no reply timeout while the acquire is held
    Client client(c);
    Lock lock(client, "door");
    raw->command({"CLIENT", "PAUSE", "60000", "WRITE"});
    auto acquiring = std::async(std::launch::async, [&] { return caught_from([&] { lock.lock(); }); });
    std::string postponed;  // the id of the connection whose script waits
    ASSERT_TRUE(eventually([&] {
        std::istringstream clients(raw->string({"CLIENT", "LIST"}));
        for (std::string line; std::getline(clients, line);) {
            if (line.find(" flags=b ") == std::string::npos) continue;
            if (line.find(" cmd=evalsha ") == std::string::npos && line.find(" cmd=eval ") == std::string::npos)
                continue;
            postponed = line.substr(3, line.find(' ') - 3);  // "id=<id> ..."
            return true;
        }
        return false;
    })) << "no acquire waits on the paused server";
    raw->command({"CLIENT", "KILL", "ID", postponed});
    raw->command({"CLIENT", "UNPAUSE"});
    ASSERT_EQ(acquiring.wait_for(20s), std::future_status::ready) << "the acquire outlived its connection";
    const Caught e = acquiring.get();
    EXPECT_EQ(next_step(e.code), "check, then retry") << e.what;
    EXPECT_TRUE(e.retried) << e.what;
    EXPECT_NE(e.what.find("may or may not have run"), std::string::npos) << e.what;
    EXPECT_NE(e.what.find("127.0.0.1:" + std::to_string(server->port())), std::string::npos) << e.what;
    lock.lock();  // the retry
    EXPECT_TRUE(lock.is_held_by_current_thread());
    lock.unlock();
}

}  // namespace
}  // namespace holdfast::testing
