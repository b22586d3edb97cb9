#include "primitive/errors.hpp"

#include <cctype>

#include "common/quoted.hpp"
#include "holdfast/errors.hpp"
#include "transport/transport.hpp"

namespace holdfast::detail {

namespace {

constexpr std::string_view acl_doc = "; docs/errors.md, \"ACL rules holdfast needs\", lists them all";

/// What to grant when the server's ACL refused `reply` ("" when it did not):
/// a refusal inside a script is an ERR naming no command; one of the call
/// itself a NOPERM naming it.
std::string acl_advice(const Reply& reply, const std::string& user) {
    const std::string& text = reply.str;
    const bool noperm = reply.is_error_code("NOPERM");
    const std::string setuser = " (ACL SETUSER " + user;
    // holdfast's scripts check the rights a release needs before they write,
    // and name the command and its channel or key (primitive/release_rights.lua.part).
    const std::string may_not = "may not run ";
    if (const auto at = text.find(may_not); noperm && at != std::string::npos) {
        const auto start = at + may_not.size();
        std::string command = text.substr(start, text.find(' ', start) - start);
        const std::string shown = command;
        for (char& c : command) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const bool channel = text.find(" on channel '", start) != std::string::npos;
        const auto open = text.find('\'', start), close = text.rfind('\'');
        const std::string target = open < close ? text.substr(open + 1, close - open - 1) : "";
        return "; the server's ACL refuses user '" + user + "' " + shown + " on " + (channel ? "channel" : "key") +
               " '" + target + "' (the command or the " + (channel ? "channel" : "key") + "): grant both" + setuser +
               " +" + command + (channel ? " &" : " ~") + target + ")" + std::string(acl_doc);
    }
    if (text.find("publish to the channel") != std::string::npos || (noperm && text.find("channels") != std::string::npos))
        return "; the server's ACL refuses user '" + user + "' holdfast's channels: grant them" + setuser +
               " &redisson_*)" + std::string(acl_doc);
    if (text.find("can't access at least one of the keys") != std::string::npos ||
        (noperm && text.find("keys") != std::string::npos))
        return "; the server's ACL refuses user '" + user + "' a key this uses: grant the key patterns" + setuser +
               " ~<pattern>)" + std::string(acl_doc);
    const std::string named = "to run the '";
    if (const auto at = text.find(named); noperm && at != std::string::npos) {
        const auto start = at + named.size();
        const std::string command = text.substr(start, text.find('\'', start) - start);
        return "; the server's ACL refuses user '" + user + "' the command: grant it" + setuser + " +" + command +
               ")" + std::string(acl_doc);
    }
    if (noperm || text.find("can't run this command") != std::string::npos)
        return "; the server's ACL refuses user '" + user + "' a command this uses: grant it" + setuser +
               " +<command>)" + std::string(acl_doc);
    return "";
}

}  // namespace

void reply_error(Transport& transport, const std::string& key, std::string what, const Reply& reply,
                 std::function<void(std::exception_ptr)> done, std::string_view kind) {
    const std::string server = transport.config().server_name();
    if (reply.str.find("WRONGTYPE") == std::string::npos) {
        const bool oom = reply.is_error_code("OOM");
        const std::string& user = transport.config().username;
        done(std::make_exception_ptr(
            ServerError("holdfast: " + what + " " + quoted(key) + " failed on " + server + ": " + reply.str +
                        (oom ? " (the server is out of memory: free memory or raise maxmemory)" : "") +
                        acl_advice(reply, user.empty() ? "default" : user))));
        return;
    }
    transport.execute(key, {"TYPE", key},
                      [key, what, server, kind = std::string(kind), done = std::move(done)](std::exception_ptr error,
                                                                                             Reply type) {
                          const std::string held = error || type.is_error() ? "another type" : "a " + type.str;
                          done(std::make_exception_ptr(
                              WrongTypeError("holdfast: cannot " + what + " " + quoted(key) + " on " + server +
                                             ": the key holds " + held +
                                             ", not a " + kind + "; pick another name or delete the key")));
                      });
}

}  // namespace holdfast::detail
