// A failure as it travels inside holdfast: its code, which every layer
// branches on, beside the message the caller will read. It becomes the
// exception of its code's kind (holdfast/errors.hpp) only where it leaves the
// library, at the std::exception_ptr of the public completions, so nothing in
// holdfast rethrows an exception to learn what it was.
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include "holdfast/errors.hpp"

namespace holdfast::detail {

class Failure {
public:
    /// No failure.
    Failure() = default;
    Failure(std::nullptr_t) {}
    /// A failure of `code` whose exception says `message`. A server code
    /// (errc::wrong_type, ...) gets its reply code ("WRONGTYPE").
    Failure(errc code, std::string message);
    /// An error reply whose first word is `reply_code` ("NOPERM"; its errc by errc_of_reply()).
    static Failure server(std::string reply_code, std::string message);

    explicit operator bool() const noexcept { return static_cast<bool>(code_); }
    const std::error_code& code() const noexcept { return code_; }
    bool is(errc code) const noexcept { return code_ == code; }
    const std::string& message() const noexcept;
    /// A server failure's reply code ("OOM"); empty for the others.
    const std::string& reply_code() const noexcept;

    /// The same failure (code, reply code), saying `message` instead.
    Failure saying(std::string message) const;
    /// The same failure, with `more` added to its message.
    Failure adding(std::string_view more) const { return saying(message() + std::string(more)); }

    /// The exception it stands for, of its code's kind (null for no failure):
    /// at the public boundary a Failure is this.
    std::exception_ptr exception() const;
    operator std::exception_ptr() const { return exception(); }
    /// Throws exception(), for the blocking forms' synchronous steps.
    [[noreturn]] void raise() const;

private:
    struct Said {
        std::string message;
        std::string reply_code;
    };

    // Every reply passes one along, most of them empty: no failure costs a
    // code and a null pointer, and copies of one (a connection failing every
    // command in flight) share what it says.
    std::error_code code_;
    std::shared_ptr<const Said> said_;
};

/// A ConnectionError's code: no connection, or none that brought the reply
/// (retrying may help).
bool is_connection(const std::error_code& code) noexcept;
/// The command got no answer from the server, whatever the reason (no
/// connection, the client closing, credentials, TLS or the protocol refused):
/// not a server's error reply, nor a lock outcome.
bool is_unanswered(const std::error_code& code) noexcept;
/// A NotOwnerError's code (not_owner, lease_lost).
bool is_not_owner(const std::error_code& code) noexcept;
/// A ServerError's code: the server answered with an error reply.
bool is_server(const std::error_code& code) noexcept;

/// ClosedError: the one way holdfast says that the client is going away,
/// "holdfast: the client is shutting down" and `detail` ("; stopped waiting for lock 'x'").
Failure client_closed(std::string_view detail = {});

}  // namespace holdfast::detail
