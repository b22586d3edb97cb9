// What a server's ACL refused, read from its error reply: the one place that
// knows every server version's wording (Redis 7.0, 7.2 and later, Valkey,
// inside a script and outside, and holdfast's own script checks).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace holdfast::detail {

struct AclRefusal {
    enum class Kind { command, key, channel };
    Kind kind = Kind::command;
    /// The command refused, lower case ("evalsha", "client|setname"), where
    /// the text names it; "" where it does not.
    std::string command;
    /// The key or channel refused, where the text names it; "" otherwise.
    std::string target;
};

/// The refusal an error reply's text (its code first) tells of, or nothing
/// for an error that is no ACL refusal. Every NOPERM is one (a command, when
/// its text says no more).
std::optional<AclRefusal> acl_refusal(std::string_view text);

}  // namespace holdfast::detail
