// A RESP reply as holdfast sees it, and the parser that builds it from bytes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct redisReader;

namespace holdfast::detail {

struct Reply {
    enum class Type { nil, integer, string, status, error, array };

    Type type = Type::nil;
    long long integer = 0;
    std::string str;               // string, status and error replies
    std::vector<Reply> elements;   // array replies

    bool is_nil() const { return type == Type::nil; }
    bool is_error() const { return type == Type::error; }
    bool is_integer() const { return type == Type::integer; }
    bool is_array() const { return type == Type::array; }
    /// True for an error reply whose code (first word) is `code`, e.g. "NOSCRIPT".
    bool is_error_code(std::string_view code) const;
    /// An error reply's code, its first word ("NOPERM", "WRONGTYPE"); "" for
    /// any other reply, and for an error whose first word is not a code.
    /// NOPERM also for an ERR telling of an ACL refusal inside a script, in
    /// every server's wording (errors/acl_refusal.hpp).
    std::string_view code() const;
    /// A one-line rendering for error messages: strings escaped and cut as
    /// common/quoted.hpp shows names, whatever bytes the server sent.
    std::string describe() const;
};

/// Incremental RESP2 parser: hiredis's reader with Reply as its object type.
class ReplyReader {
public:
    ReplyReader();
    ~ReplyReader();
    ReplyReader(const ReplyReader&) = delete;
    ReplyReader& operator=(const ReplyReader&) = delete;

    void feed(const char* data, std::size_t size);
    /// Next complete reply, or nullptr when more bytes are needed. It lives
    /// in the reader until the next call to next(): read it there, or move it
    /// out to keep it. One read in place leaves its memory to the next reply
    /// (a pub/sub message like the last costs no allocation).
    /// Throws std::runtime_error when the stream is not RESP.
    Reply* next();
    /// Drops buffered bytes and any half-parsed reply (after a reconnect).
    /// The last reply next() gave stays readable.
    void reset();

private:
    Reply root_;  // the reply being read (hiredis's root object)
    redisReader* reader_;
};

}  // namespace holdfast::detail
