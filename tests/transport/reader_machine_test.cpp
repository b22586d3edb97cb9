// The connection's reader on its own: bytes in, routes out, no server.
#include "transport/reader_machine.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace holdfast::detail {
namespace {

using ReadKind = ReaderMachine::Action::Kind;
using To = AnswerRoute::To;

// A subscriber's test: a RESP2 pub/sub message.
bool is_message(const Reply& r) {
    return r.is_array() && r.elements.size() == 3 && r.elements[0].str == "message";
}
const ReaderMachine::PushTest subscriber = is_message;
const ReaderMachine::PushTest handshake;  // no push test: every reply answers a command

// A reply as describe() shows it, but a string whole (describe() cuts a long
// one): the tests check that every byte arrived.
std::string rendered(const Reply& r) { return r.type == Reply::Type::string ? '"' + r.str + '"' : r.describe(); }

// Every action until the machine asks to read, the replies rendered.
std::vector<std::string> drain(ReaderMachine& reader, const ReaderMachine::PushTest& is_push) {
    std::vector<std::string> out;
    for (;;) {
        const auto action = reader.next(is_push);
        switch (action.kind) {
            case ReadKind::read: return out;
            case ReadKind::push: out.push_back("push " + rendered(*action.reply)); break;
            case ReadKind::answer: out.push_back("answer " + rendered(*action.reply)); break;
            case ReadKind::protocol_error: out.push_back("error " + action.error); return out;
        }
    }
}

using Seen = std::vector<std::string>;

TEST(ReaderMachine, AsksToReadUntilAReplyIsWhole) {
    ReaderMachine reader;
    EXPECT_EQ(drain(reader, subscriber), Seen{});
    const std::string first = "$5\r\nhel";
    reader.feed(first);
    EXPECT_EQ(drain(reader, subscriber), Seen{});
    const std::string rest = "lo\r\n:7\r\n";
    reader.feed(rest);
    EXPECT_EQ(drain(reader, subscriber), (Seen{"answer \"hello\"", "answer 7"}));
}

TEST(ReaderMachine, ReadsEveryReplyOfAReadLongerThanItsSlice) {
    // 64 KiB as one read: fed a slice at a time, nothing lost between slices.
    std::string bytes;
    for (int i = 0; i < 10000; ++i) bytes += "+OK\r\n";
    const std::string big(20000, 'x');
    bytes += "$20000\r\n" + big + "\r\n";
    ReaderMachine reader;
    reader.feed(bytes);
    const auto seen = drain(reader, handshake);
    ASSERT_EQ(seen.size(), 10001u);
    EXPECT_EQ(seen.front(), "answer OK");
    EXPECT_EQ(seen.back(), "answer \"" + big + "\"");
}

TEST(ReaderMachine, PushesOnlyWhereTheSubscribersTestSaysSo) {
    const std::string bytes = "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\n0\r\n+OK\r\n";
    ReaderMachine established;
    established.feed(bytes);
    EXPECT_EQ(drain(established, subscriber), (Seen{"push [\"message\", \"ch\", \"0\"]", "answer OK"}));
    ReaderMachine handshaking;  // no push comes before the handshake ends
    handshaking.feed(bytes);
    EXPECT_EQ(drain(handshaking, handshake), (Seen{"answer [\"message\", \"ch\", \"0\"]", "answer OK"}));
}

TEST(ReaderMachine, BytesThatAreNotRespAreAProtocolErrorThatNamesTheSuspect) {
    ReaderMachine reader;
    const std::string http = "HTTP/1.1 400 Bad Request\r\n";
    reader.feed(http);
    const auto seen = drain(reader, handshake);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_NE(seen[0].find("error "), std::string::npos) << seen[0];
    EXPECT_NE(seen[0].find("is this a Redis server?"), std::string::npos) << seen[0];
}

TEST(ReaderMachine, AResetDropsAHalfReadReplyForTheNextConnection) {
    ReaderMachine reader;
    const std::string half = "*2\r\n$3\r\nabc\r\n";
    reader.feed(half);
    EXPECT_EQ(drain(reader, handshake), Seen{});
    reader.reset();
    const std::string next = "+PONG\r\n";
    reader.feed(next);
    EXPECT_EQ(drain(reader, handshake), Seen{"answer PONG"});
    // ...and after a protocol error too.
    const std::string junk = "?\r\n";
    reader.feed(junk);
    ASSERT_EQ(drain(reader, handshake).size(), 1u);
    reader.reset();
    reader.feed(next);
    EXPECT_EQ(drain(reader, handshake), Seen{"answer PONG"});
}

Reply server_error(const char* text) {
    Reply r;
    r.type = Reply::Type::error;
    r.str = text;
    return r;
}
Reply ok_status() {
    Reply r;
    r.type = Reply::Type::status;
    r.str = "OK";
    return r;
}

struct Row {
    const char* what;
    Reply reply;
    Awaited awaited;
    bool subscriber;
    To to;
    bool rights_narrowed;
};

TEST(RouteAnswer, EveryRoute) {
    const Awaited handler{true, false}, resendable{true, true}, none{false, false};
    const Row rows[] = {
        {"a reply to a command", ok_status(), handler, false, To::handler, false},
        {"an error reply to a command", server_error("WRONGTYPE Operation against a key"), handler, false, To::handler,
         false},
        {"READONLY for a command kept to send again", server_error("READONLY You can't write against a read only replica."),
         resendable, false, To::requeue, false},
        {"READONLY for a command not kept (no sentinel): the handler's",
         server_error("READONLY You can't write against a read only replica."), handler, false, To::handler, false},
        {"NOPERM outside a script", server_error("NOPERM this user has no permissions to run the 'del' command"), handler,
         false, To::handler, true},
        {"an ACL refusal inside a script, 7.0's ERR wording",
         server_error("ERR The user executing the script can't run this command or subcommand script: b0c3, on "
               "@user_script:1."),
         resendable, false, To::handler, true},
        {"an ERR that is not a refusal", server_error("ERR unknown command 'FOO'"), handler, false, To::handler, false},
        {"nobody awaits it, on a subscriber", ok_status(), none, true, To::push, false},
        {"nobody awaits it, on a command connection", ok_status(), none, false, To::unexpected, false},
        {"NOPERM nobody awaits: not read as the user's rights",
         server_error("NOPERM this user has no permissions to run the 'del' command"), none, true, To::push, false},
    };
    for (const auto& row : rows) {
        const auto route = route_answer(row.reply, row.awaited, row.subscriber);
        EXPECT_EQ(route.to, row.to) << row.what;
        EXPECT_EQ(route.rights_narrowed, row.rights_narrowed) << row.what;
    }
}

}  // namespace
}  // namespace holdfast::detail
