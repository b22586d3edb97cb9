#include "errors/acl_advice.hpp"

#include <cctype>

#include "errors/acl_refusal.hpp"

namespace holdfast::detail {

namespace {

constexpr std::string_view acl_doc = "; docs/errors.md, \"ACL rules holdfast needs\", lists them all";

std::string upper(std::string_view text) {
    std::string result(text);
    for (char& c : result) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return result;
}

}  // namespace

std::string acl_advice(std::string_view text, std::string_view user_name, std::string_view channel) {
    const auto refusal = acl_refusal(text);
    if (!refusal) return "";
    const std::string user(user_name.empty() ? "default" : user_name);
    const std::string refuses = "; the server's ACL refuses user '" + user + "' ";
    const std::string setuser = " (ACL SETUSER " + user;
    using Kind = AclRefusal::Kind;
    const bool on_channel = refusal->kind == Kind::channel;
    // holdfast's scripts name the command and its channel or key
    // (primitive/checked_calls.lua.part): either may be what is missing.
    if (refusal->kind != Kind::command && !refusal->command.empty() && !refusal->target.empty()) {
        const std::string what = on_channel ? "channel" : "key";
        return refuses + upper(refusal->command) + " on " + what + " '" + refusal->target + "' (the command or the " +
               what + "): grant both" + setuser + " +" + refusal->command + (on_channel ? " &" : " ~") +
               refusal->target + ")" + std::string(acl_doc);
    }
    if (on_channel) {
        const std::string named = refusal->target.empty() ? std::string(channel) : refusal->target;
        return refuses +
               (named.empty() ? "holdfast's channels: grant them" + setuser + " &redisson_*)"
                              : "the channel: grant it" + setuser + " &" + named + ", or a pattern covering it)") +
               std::string(acl_doc);
    }
    if (refusal->kind == Kind::key)
        return refuses + (refusal->target.empty() ? "a key this uses" : "the key '" + refusal->target + "'") +
               ": grant the key patterns" + setuser + " ~<pattern>)" + std::string(acl_doc);
    if (!refusal->command.empty())
        return refuses + "the command: grant it" + setuser + " +" + refusal->command + ")" + std::string(acl_doc);
    return refuses + "a command this uses: grant it" + setuser + " +<command>)" + std::string(acl_doc);
}

}  // namespace holdfast::detail
