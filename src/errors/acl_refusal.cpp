#include "errors/acl_refusal.hpp"

#include <cctype>

namespace holdfast::detail {

namespace {

using Kind = AclRefusal::Kind;

/// Drops `prefix` from `text` if it starts with it.
bool consume(std::string_view& text, std::string_view prefix) {
    if (!text.starts_with(prefix)) return false;
    text.remove_prefix(prefix.size());
    return true;
}

/// The name quoted in `text`: from its first quote to the last `close`
/// ("' command"), so a name holding quotes is kept whole; "" without one.
std::string quoted(std::string_view text, std::string_view close) {
    const auto open = text.find('\'');
    const auto end = text.rfind(close);
    if (open == std::string_view::npos || end == std::string_view::npos || end <= open) return "";
    return std::string(text.substr(open + 1, end - open - 1));
}

std::string lower(std::string_view text) {
    std::string result(text);
    for (char& c : result) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return result;
}

/// A key or channel by the word naming it ("a key", "the 'x' channel", "one of the keys").
Kind target_kind(std::string_view text) { return text.find("channel") != std::string_view::npos ? Kind::channel : Kind::key; }

}  // namespace

std::optional<AclRefusal> acl_refusal(std::string_view text) {
    std::string_view reason = text;
    // The code, or inside a script the server's preamble: Redis 7.0's "ERR The
    // user executing the script can't ...", 7.2's "ERR ACL failure in script: ...".
    const bool noperm = consume(reason, "NOPERM") && (reason.empty() || reason.front() == ' ');
    if (!noperm && !consume(reason, "ERR ACL failure in script: ") && !consume(reason, "ERR The user executing the script "))
        return std::nullopt;
    while (reason.starts_with(' ')) reason.remove_prefix(1);

    // holdfast's own checks (primitive/checked_calls.lua.part): "this user may
    // not run DEL on key 'job', which releasing the lock needs".
    if (consume(reason, "this user may not run ")) {
        const std::string_view on = reason.substr(reason.find(' ') + 1);
        return AclRefusal{on.starts_with("on channel ") ? Kind::channel : Kind::key,
                          lower(reason.substr(0, reason.find(' '))), quoted(on, "', which ")};
    }
    // "User app has no permissions to run the 'x' command" (7.2 and later),
    // "this user has no permissions to run the 'x' command" (7.0); "... to
    // access the 'k' key" (7.2's long form), "... to access one of the keys
    // used as arguments" (7.0).
    constexpr std::string_view has_none = "has no permissions to ";
    if (const auto at = reason.find(has_none); at != std::string_view::npos) {
        std::string_view what = reason.substr(at + has_none.size());
        if (consume(what, "run ")) return AclRefusal{Kind::command, quoted(what, "' command"), ""};
        const Kind kind = target_kind(what);
        return AclRefusal{kind, "", quoted(what, kind == Kind::channel ? "' channel" : "' key")};
    }
    // 7.2 and later: "No permissions to access a key", "... a channel".
    if (consume(reason, "No permissions to access ")) return AclRefusal{target_kind(reason), "", ""};
    // 7.0 in a script: "can't run this command or subcommand", "can't access
    // at least one of the keys mentioned in the command", "can't publish to
    // the channel mentioned in the command".
    if (consume(reason, "can't publish")) return AclRefusal{Kind::channel, "", ""};
    if (consume(reason, "can't access")) return AclRefusal{Kind::key, "", ""};
    return AclRefusal{};  // a refusal, wording unknown: a command, unnamed
}

}  // namespace holdfast::detail
