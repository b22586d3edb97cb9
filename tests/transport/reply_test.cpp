// The RESP reader builds holdfast's Reply from hiredis's parser; no server needed.
#include <gtest/gtest.h>

#include "transport/command.hpp"
#include "transport/reply.hpp"

namespace holdfast::detail {
namespace {

TEST(ReplyReader, ParsesEveryTypeAndNesting) {
    ReplyReader reader;
    const char text[] = "+OK\r\n-NOSCRIPT No matching script\r\n:42\r\n$-1\r\n$3\r\na\0b\r\n*2\r\n*1\r\n:1\r\n$0\r\n\r\n";
    const std::string bytes(text, sizeof text - 1);
    reader.feed(bytes.data(), bytes.size());
    auto status = reader.next();
    ASSERT_TRUE(status);
    EXPECT_EQ(status->type, Reply::Type::status);
    EXPECT_EQ(status->str, "OK");
    auto error = reader.next();
    EXPECT_TRUE(error->is_error_code("NOSCRIPT"));
    EXPECT_FALSE(error->is_error_code("NOSCRIP"));
    EXPECT_EQ(reader.next()->integer, 42);
    EXPECT_TRUE(reader.next()->is_nil());
    EXPECT_EQ(reader.next()->str, std::string("a\0b", 3));
    auto array = reader.next();
    ASSERT_TRUE(array->is_array());
    ASSERT_EQ(array->elements.size(), 2u);
    ASSERT_EQ(array->elements[0].elements.size(), 1u);
    EXPECT_EQ(array->elements[0].elements[0].integer, 1);
    EXPECT_EQ(array->elements[1].str, "");
    EXPECT_FALSE(reader.next());
}

TEST(ReplyReader, WaitsForTheRestOfASplitReply) {
    ReplyReader reader;
    reader.feed("*2\r\n:1", 6);
    EXPECT_FALSE(reader.next());
    reader.feed("\r\n:2\r\n", 6);
    auto reply = reader.next();
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->elements[1].integer, 2);
}

TEST(ReplyReader, ForgetsAHalfReadReplyOnReset) {
    ReplyReader reader;
    reader.feed("*2\r\n$5\r\nhello\r\n", 15);
    EXPECT_FALSE(reader.next());
    reader.reset();  // the half-read array goes (hiredis frees its root)
    reader.feed(":7\r\n", 4);
    auto reply = reader.next();
    ASSERT_TRUE(reply);
    EXPECT_TRUE(reply->is_integer());
    EXPECT_EQ(reply->integer, 7);
    EXPECT_TRUE(reply->elements.empty());
}

// A reply read in place (a pub/sub message) leaves its memory to the next:
// one of the same shape is built over it without allocating, and one of
// another shape keeps nothing of it.
TEST(ReplyReader, BuildsAReplyInThePlaceOfTheLast) {
    const auto message = [](const std::string& channel, const std::string& payload) {
        return encode_command({"message", channel, payload});
    };
    ReplyReader reader;
    const std::string first_bytes = message("redisson_lock__channel:{orders-0000000001}", "0");
    reader.feed(first_bytes.data(), first_bytes.size());
    const Reply* first = reader.next();
    ASSERT_TRUE(first);
    const Reply* elements = first->elements.data();
    const char* channel = first->elements[1].str.data();
    const std::string second_bytes = message("redisson_lock__channel:{orders-0000000002}", "17");
    reader.feed(second_bytes.data(), second_bytes.size());
    const Reply* second = reader.next();
    ASSERT_TRUE(second);
    EXPECT_EQ(second->elements.data(), elements) << "the element vector was made again";
    EXPECT_EQ(second->elements[1].str.data(), channel) << "the channel's string was made again";
    EXPECT_EQ(second->elements[1].str, "redisson_lock__channel:{orders-0000000002}");
    EXPECT_EQ(second->elements[2].str, "17");
    reader.feed(":5\r\n", 4);
    const Reply* integer = reader.next();
    ASSERT_TRUE(integer);
    EXPECT_TRUE(integer->is_integer());
    EXPECT_EQ(integer->integer, 5);
    EXPECT_TRUE(integer->str.empty());
    EXPECT_TRUE(integer->elements.empty());
    // Moved out, a reply is the caller's: the next one does not touch it.
    reader.feed("*1\r\n$2\r\nab\r\n", 12);
    const Reply kept = std::move(*reader.next());
    reader.feed("-ERR no\r\n", 9);
    const Reply* error = reader.next();
    ASSERT_TRUE(error);
    EXPECT_TRUE(error->is_error());
    EXPECT_TRUE(error->elements.empty());
    ASSERT_EQ(kept.elements.size(), 1u);
    EXPECT_EQ(kept.elements[0].str, "ab");
}

TEST(ReplyReader, RejectsBytesThatAreNotResp) {
    ReplyReader reader;
    reader.feed("HTTP/1.1 400 Bad Request\r\n", 26);
    EXPECT_THROW(reader.next(), std::runtime_error);
}

TEST(EncodeCommand, KeepsBinaryArguments) {
    EXPECT_EQ(encode_command({"SET", std::string_view("k\0", 2), ""}), std::string("*3\r\n$3\r\nSET\r\n$2\r\nk\0\r\n$0\r\n\r\n", 27));
}

// describe(): the one-line form error messages show of a reply they did not expect.
Reply read_one(const std::string& bytes) {
    ReplyReader reader;
    reader.feed(bytes.data(), bytes.size());
    Reply* reply = reader.next();
    EXPECT_TRUE(reply) << bytes;
    return reply ? std::move(*reply) : Reply{};
}

TEST(ReplyDescribe, ShowsEachTypeAsRedisCliDoes) {
    EXPECT_EQ(read_one("$-1\r\n").describe(), "(nil)");
    EXPECT_EQ(read_one(":-7\r\n").describe(), "-7");
    EXPECT_EQ(read_one("$2\r\nok\r\n").describe(), "\"ok\"");
    EXPECT_EQ(read_one("+QUEUED\r\n").describe(), "QUEUED");
    EXPECT_EQ(read_one("-ERR no\r\n").describe(), "(error) ERR no");
    EXPECT_EQ(read_one("*0\r\n").describe(), "[]");
    EXPECT_EQ(read_one("*3\r\n:1\r\n*2\r\n$1\r\na\r\n$-1\r\n+OK\r\n").describe(), "[1, [\"a\", (nil)], OK]");
}

// A server's bytes may be anything: the line stays one line, printable and short
// (common/quoted.hpp), as every name in a message does.
TEST(ReplyDescribe, EscapesAndCutsWhatTheServerSent) {
    EXPECT_EQ(read_one(std::string("$5\r\na\nb\0\xff\r\n", 11)).describe(), "\"a\\nb\\x00\\xff\"");
    EXPECT_EQ(read_one("-ERR bad\r\x1b[2J\r\n").describe(), "(error) ERR bad\\r\\x1b[2J");
    const Reply huge = read_one("$1000\r\n" + std::string(1000, 'x') + "\r\n");
    EXPECT_EQ(huge.describe(), "\"" + std::string(128, 'x') + "... (1000 bytes)\"");
}

}  // namespace
}  // namespace holdfast::detail
