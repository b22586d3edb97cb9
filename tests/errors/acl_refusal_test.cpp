// Every server's wording of an ACL refusal, read by the one classifier
// (src/errors/acl_refusal.cpp) that Reply::code(), the transport (which sends
// a refused trusted twin again as the checked script), the connection (which
// then stops trusting its user) and acl_advice() rely on. No server needed:
// CI runs Debian's 7.0.15 only, so these texts, each copied from the server
// named beside it, keep CI honest about the others.
//
// Where the texts came from: each server started on its own port, users
// `nocmd` (+@all -del -evalsha), `nocmd2` (+@all -del), `nokey` (~other),
// `nochan` (resetchannels) and the reply of each refused call read off the
// socket: outside a script (DEL, EVALSHA, GET, EVAL with a declared key,
// PUBLISH, SPUBLISH, SUBSCRIBE, SSUBSCRIBE, PSUBSCRIBE, in RESP2 and RESP3,
// and while subscribed) and inside one, by EVAL and EVALSHA alike
// (redis.call of del, get, publish, spublish). The script's SHA1 and line
// are as the servers gave them.
//   Redis 7.0.15    redis_version:7.0.15 (Debian's package)
//   Redis 7.2.6     redis_version:7.2.6 (built from tag 7.2.6)
//   Redis 7.4.1     redis_version:7.4.1 (built from tag 7.4.1)
//   Redis 8.0-dev   redis_version:255.255.255 (built from branch unstable at 4f8cdc2, 18 October 2024)
//   Valkey 7.2.7    valkey_version:7.2.7, redis_version:7.2.4 (built from tag 7.2.7)
//   Valkey 8.0.1    valkey_version:8.0.1, redis_version:7.2.4 (built from tag 8.0.1)
// Every server from 7.2 on answers each case with the same text, outside
// scripts as in them; `since_7_2` below lists them once.
#include <gtest/gtest.h>

#include "errors/acl_advice.hpp"
#include "errors/acl_refusal.hpp"
#include "holdfast/errors.hpp"
#include "transport/reply.hpp"

namespace holdfast::detail {
namespace {

using Kind = AclRefusal::Kind;

struct Seen {
    const char* where;    // the case, as collected
    const char* text;     // the error reply, code first
    Kind kind;
    const char* command;  // the command the text names, or ""
};

// Redis 7.0.15.
const Seen redis_7_0[] = {
    {"DEL outside a script", "NOPERM this user has no permissions to run the 'del' command", Kind::command, "del"},
    {"EVALSHA refused itself", "NOPERM this user has no permissions to run the 'evalsha' command", Kind::command,
     "evalsha"},
    {"GET k; EVAL with k declared",
     "NOPERM this user has no permissions to access one of the keys used as arguments", Kind::key, ""},
    {"PUBLISH, SPUBLISH, SUBSCRIBE, SSUBSCRIBE, PSUBSCRIBE (RESP2 and RESP3, subscribed or not)",
     "NOPERM this user has no permissions to access one of the channels used as arguments", Kind::channel, ""},
    {"redis.call('del') by EVAL and EVALSHA",
     "ERR The user executing the script can't run this command or subcommand script: "
     "b0c3ee9a68227b63e0d7c57ba3a0514894783ea5, on @user_script:1.",
     Kind::command, ""},
    {"redis.call('get', 'k') by EVAL and EVALSHA",
     "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments "
     "script: 496368505412ccb8a568d43cf5c46b9910905b08, on @user_script:1.",
     Kind::key, ""},
    {"redis.call('publish') by EVAL and EVALSHA",
     "ERR The user executing the script can't publish to the channel mentioned in the command script: "
     "74b48facc8d88408df5ec994b50567763b69a952, on @user_script:1.",
     Kind::channel, ""},
    {"redis.call('spublish') by EVAL and EVALSHA",
     "ERR The user executing the script can't publish to the channel mentioned in the command script: "
     "d43680e8ccdea3428bfc3dd0dac3515c90364055, on @user_script:1.",
     Kind::channel, ""},
};

// Redis 7.2.6, 7.4.1, 8.0-dev; Valkey 7.2.7, 8.0.1: the same texts.
const Seen since_7_2[] = {
    {"DEL outside a script", "NOPERM User nocmd has no permissions to run the 'del' command", Kind::command, "del"},
    {"EVALSHA refused itself", "NOPERM User nocmd has no permissions to run the 'evalsha' command", Kind::command,
     "evalsha"},
    {"CLIENT SETNAME refused (a subcommand)", "NOPERM User nosub has no permissions to run the 'client|setname' command",
     Kind::command, "client|setname"},
    {"GET k; EVAL with k declared", "NOPERM No permissions to access a key", Kind::key, ""},
    {"PUBLISH, SPUBLISH, SUBSCRIBE, SSUBSCRIBE, PSUBSCRIBE (RESP2 and RESP3, subscribed or not)",
     "NOPERM No permissions to access a channel", Kind::channel, ""},
    {"redis.call('del') by EVAL and EVALSHA",
     "ERR ACL failure in script: User nocmd2 has no permissions to run the 'del' command script: "
     "b0c3ee9a68227b63e0d7c57ba3a0514894783ea5, on @user_script:1.",
     Kind::command, "del"},
    {"redis.call('get', 'k') by EVAL and EVALSHA",
     "ERR ACL failure in script: No permissions to access a key script: 496368505412ccb8a568d43cf5c46b9910905b08, on "
     "@user_script:1.",
     Kind::key, ""},
    {"redis.call('publish') by EVAL and EVALSHA",
     "ERR ACL failure in script: No permissions to access a channel script: "
     "74b48facc8d88408df5ec994b50567763b69a952, on @user_script:1.",
     Kind::channel, ""},
    {"redis.call('spublish') by EVAL and EVALSHA",
     "ERR ACL failure in script: No permissions to access a channel script: "
     "d43680e8ccdea3428bfc3dd0dac3515c90364055, on @user_script:1.",
     Kind::channel, ""},
};

// holdfast's own checks (primitive/checked_calls.lua.part), on every server.
const Seen holdfasts[] = {
    {"a release right", "NOPERM this user may not run PUBLISH on channel 'redisson_lock__channel:{job}', which "
                        "releasing the lock needs",
     Kind::channel, "publish"},
    {"a call after the first write", "NOPERM this user may not run PEXPIRE on key 'job', which taking the lock needs",
     Kind::key, "pexpire"},
};

Reply refusal_reply(const char* text) {
    Reply reply;
    reply.type = Reply::Type::error;
    reply.str = text;
    return reply;
}

template <std::size_t N>
void expect_read(const Seen (&texts)[N], const char* server) {
    for (const Seen& seen : texts) {
        SCOPED_TRACE(std::string(server) + ", " + seen.where);
        const auto refusal = acl_refusal(seen.text);
        ASSERT_TRUE(refusal) << seen.text;
        EXPECT_EQ(refusal->kind, seen.kind) << seen.text;
        EXPECT_EQ(refusal->command, seen.command) << seen.text;
        // One code for all: the error is no_permission, a refused trusted twin
        // is sent again checked, the connection stops trusting its user.
        const Reply reply = refusal_reply(seen.text);
        EXPECT_EQ(reply.code(), "NOPERM") << seen.text;
        EXPECT_TRUE(reply.is_error_code("NOPERM")) << seen.text;
        EXPECT_EQ(errc_of_reply(reply.code()), errc::no_permission) << seen.text;
    }
}

TEST(AclRefusal, EveryServersWordingIsReadAsWhatItRefused) {
    expect_read(redis_7_0, "Redis 7.0.15");
    expect_read(since_7_2, "Redis 7.2.6, 7.4.1, 8.0-dev, Valkey 7.2.7, 8.0.1");
    expect_read(holdfasts, "holdfast");
}

TEST(AclRefusal, HoldfastsOwnRefusalNamesTheKeyOrChannel) {
    EXPECT_EQ(acl_refusal(holdfasts[0].text)->target, "redisson_lock__channel:{job}");
    EXPECT_EQ(acl_refusal(holdfasts[1].text)->target, "job");
    // A name holding quotes is kept whole.
    EXPECT_EQ(acl_refusal("NOPERM this user may not run DEL on key 'it's', which releasing the lock needs")->target,
              "it's");
}

// ACL DRYRUN's wording (Redis 7.2.6), which names the key or channel; a
// server may one day answer so.
TEST(AclRefusal, TheLongFormNamesTheKeyOrChannel) {
    const auto key = acl_refusal("NOPERM User nokey has no permissions to access the 'k' key");
    ASSERT_TRUE(key);
    EXPECT_EQ(key->kind, Kind::key);
    EXPECT_EQ(key->target, "k");
    const auto channel = acl_refusal("NOPERM User nochan has no permissions to access the 'ch' channel");
    ASSERT_TRUE(channel);
    EXPECT_EQ(channel->kind, Kind::channel);
    EXPECT_EQ(channel->target, "ch");
}

TEST(AclRefusal, OtherErrorsAreNoRefusal) {
    for (const char* text : {"ERR unknown command 'FOO', with args beginning with: ",
                             "WRONGTYPE Operation against a key holding the wrong kind of value",
                             "NOSCRIPT No matching script. Please use EVAL.", "NOPERMISSION is not a code",
                             "OOM command not allowed when used memory > 'maxmemory'.",
                             "ERR user_script:1: Script attempted to access nonexistent global variable 'x' script: "
                             "1b9e..., on @user_script:1.",
                             "BUSY Redis is busy running a script.", ""}) {
        EXPECT_FALSE(acl_refusal(text)) << text;
        EXPECT_NE(refusal_reply(text).code(), "NOPERM") << text;
    }
}

// The advice names what is missing: a channel where a channel is (not a
// command, as 7.2's wording once got), a key, or the command itself.
template <std::size_t N>
void expect_advice(const Seen (&texts)[N], const char* server) {
    for (const Seen& seen : texts) {
        SCOPED_TRACE(std::string(server) + ", " + seen.where);
        const std::string advice = acl_advice(seen.text, "app", "redisson_lock__channel:{job}");
        std::string grant;
        switch (seen.kind) {
            case Kind::channel: grant = "&redisson_lock__channel:{job}"; break;
            case Kind::key: grant = "~"; break;
            case Kind::command: grant = std::string("+") + (*seen.command ? seen.command : "<command>"); break;
        }
        EXPECT_NE(advice.find("(ACL SETUSER app "), std::string::npos) << advice;
        EXPECT_NE(advice.find(grant), std::string::npos) << "not '" << grant << "': " << advice;
        if (seen.kind != Kind::command) {
            EXPECT_EQ(advice.find("+<command>"), std::string::npos) << advice;
        }
    }
}

TEST(AclAdvice, EveryServersWordingGetsTheRuleThatGrantsIt) {
    expect_advice(redis_7_0, "Redis 7.0.15");
    expect_advice(since_7_2, "Redis 7.2.6, 7.4.1, 8.0-dev, Valkey 7.2.7, 8.0.1");
    expect_advice(holdfasts, "holdfast");
    // Without the channel at hand, holdfast's channels by their pattern.
    EXPECT_NE(acl_advice("NOPERM No permissions to access a channel", "app").find("ACL SETUSER app &redisson_*"),
              std::string::npos);
}

}  // namespace
}  // namespace holdfast::detail
