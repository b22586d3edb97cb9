// The connection's reader as a machine: bytes in, one decision per reply out.
// No socket, no lock, no handler: the Connection carries the decisions out,
// so every route is a table test without a server.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "transport/reply.hpp"

namespace holdfast::detail {

class ReaderMachine {
public:
    struct Action {
        enum class Kind {
            read,            // every byte fed is parsed: read more
            push,            // a push (a pub/sub message): to the subscriber
            answer,          // the reply to the oldest command in flight: route_answer()
            protocol_error,  // the bytes are not RESP: close the connection
        };
        Kind kind = Kind::read;
        Reply* reply = nullptr;  // push, answer: in the machine until the next call to next()
        std::string error;       // protocol_error
    };
    using PushTest = std::function<bool(const Reply&)>;

    /// Bytes read (decrypted, under TLS). They are parsed a slice at a time
    /// as next() needs them, so they must stay valid until next() says read.
    void feed(std::string_view bytes);
    /// What to do next. `is_push`: the subscriber's test on an established
    /// connection; empty during the handshake (no push comes before it ends).
    Action next(const PushTest& is_push);
    /// A new connection: unread bytes and a half-read reply are dropped.
    void reset();

private:
    // hiredis moves its unread bytes to the front each time it has parsed
    // 1 KiB, and frees a buffer over 16 KiB once empty: feeding a whole 64 KiB
    // read at once would cost a quadratic copy and a glibc consolidation.
    static constexpr std::size_t feed_slice = 4 * 1024;

    ReplyReader parser_;
    std::string_view unfed_;
};

/// Where an answer goes, given the command in flight it answers.
struct AnswerRoute {
    enum class To {
        handler,     // the command's handler
        requeue,     // READONLY from a demoted master: the command did not run; it waits for the next master
        push,        // no command awaits it, on a subscriber: the subscriber's
        unexpected,  // no command awaits it: a protocol error
    };
    To to = To::handler;
    // NOPERM: the user's rights are narrower than ACL GETUSER last said.
    bool rights_narrowed = false;
};
struct Awaited {
    bool handler = false;     // a command in flight awaits this reply
    bool resendable = false;  // and may be sent again (kept encoded: behind a sentinel)
};
AnswerRoute route_answer(const Reply& reply, Awaited awaited, bool subscriber);

}  // namespace holdfast::detail
