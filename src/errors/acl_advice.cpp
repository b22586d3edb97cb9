#include "errors/acl_advice.hpp"

#include <cctype>

namespace holdfast::detail {

namespace {

constexpr std::string_view acl_doc = "; docs/errors.md, \"ACL rules holdfast needs\", lists them all";

bool has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

std::string lower(std::string_view text) {
    std::string result(text);
    for (char& c : result) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return result;
}

}  // namespace

std::string acl_advice(std::string_view text, std::string_view user_name, std::string_view channel) {
    // A refusal inside a script is an ERR naming no command; one of the call itself a NOPERM naming it.
    const bool noperm = text.starts_with("NOPERM");
    const std::string user(user_name.empty() ? "default" : user_name);
    const std::string refuses = "; the server's ACL refuses user '" + user + "' ";
    const std::string setuser = " (ACL SETUSER " + user;
    // holdfast's scripts check the rights a release needs before they write,
    // and name the command and its channel or key (primitive/release_rights.lua.part).
    const std::string_view may_not = "may not run ";
    if (const auto at = text.find(may_not); noperm && at != std::string_view::npos) {
        const auto start = at + may_not.size();
        const std::string_view shown = text.substr(start, text.find(' ', start) - start);
        const bool on_channel = has(text.substr(start), " on channel '");
        const auto open = text.find('\'', start), close = text.rfind('\'');
        const std::string_view target = open < close ? text.substr(open + 1, close - open - 1) : "";
        const std::string what = on_channel ? "channel" : "key";
        return refuses + std::string(shown) + " on " + what + " '" + std::string(target) + "' (the command or the " +
               what + "): grant both" + setuser + " +" + lower(shown) + (on_channel ? " &" : " ~") +
               std::string(target) + ")" + std::string(acl_doc);
    }
    if (has(text, "publish to the channel") || (noperm && has(text, "channels")))
        return refuses +
               (channel.empty() ? "holdfast's channels: grant them" + setuser + " &redisson_*)"
                                : "the channel: grant it" + setuser + " &" + std::string(channel) +
                                      ", or a pattern covering it)") +
               std::string(acl_doc);
    if (has(text, "can't access at least one of the keys") || (noperm && has(text, "keys")))
        return refuses + "a key this uses: grant the key patterns" + setuser + " ~<pattern>)" + std::string(acl_doc);
    const std::string named = "to run the '";
    const auto command_at = text.find(named);
    if (noperm && command_at != std::string_view::npos) {
        const auto start = command_at + named.size();
        const std::string_view command = text.substr(start, text.find('\'', start) - start);
        return refuses + "the command: grant it" + setuser + " +" + std::string(command) + ")" + std::string(acl_doc);
    }
    if (noperm || has(text, "can't run this command"))
        return refuses + "a command this uses: grant it" + setuser + " +<command>)" + std::string(acl_doc);
    return "";
}

}  // namespace holdfast::detail
