#include "primitive/reply_errors.hpp"

#include "common/quoted.hpp"
#include "errors/acl_advice.hpp"
#include "transport/transport.hpp"

namespace holdfast::detail {

Failure wrong_type(std::string_view what, const std::string& key, std::string_view server, std::string_view held,
                   std::string_view kind) {
    return {errc::wrong_type, "holdfast: " + (what.empty() ? "" : std::string(what) + " ") + quoted(key) +
                                  (server.empty() ? "" : " on " + std::string(server)) + ": the key holds " +
                                  std::string(held) + ", not a " + std::string(kind) +
                                  "; pick another name or delete the key"};
}

void reply_error(Transport& transport, const std::string& key, std::string what, const Reply& reply,
                 std::function<void(Failure)> done, std::string_view kind) {
    const std::string server = transport.config().server_name();
    if (reply.code() != "WRONGTYPE") {
        const std::string& user = transport.config().username;
        done(Failure::server(
            std::string(reply.code()),
            "holdfast: " + what + " " + quoted(key) + " failed on " + server + ": " + reply.str +
                (reply.is_error_code("OOM") ? " (the server is out of memory: free memory or raise maxmemory)" : "") +
                acl_advice(reply.str, user)));
        return;
    }
    transport.execute(key, {"TYPE", key},
                      [key, what, server, kind = std::string(kind), done = std::move(done)](Failure error, Reply type) {
                          const std::string held = error || type.is_error() ? "another type" : "a " + type.str;
                          done(wrong_type("cannot " + what, key, server, held, kind));
                      });
}

}  // namespace holdfast::detail
