// What to grant when a server's ACL refused a command: the one place that
// turns an ACL refusal into the ACL SETUSER line that fixes it.
#pragma once

#include <string>
#include <string_view>

namespace holdfast::detail {

/// "; the server's ACL refuses user 'app' ...: grant it (ACL SETUSER app +evalsha); docs/errors.md ..."
/// for an error reply `reply` (its full text, code first) that an ACL refusal
/// explains, "" for any other. `user`: the client's ACL user ("" for default).
/// `channel`: the channel the refused command was about, where the caller
/// knows it (a SUBSCRIBE); else holdfast's channels are named by pattern.
std::string acl_advice(std::string_view reply, std::string_view user, std::string_view channel = {});

}  // namespace holdfast::detail
