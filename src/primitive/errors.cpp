#include "primitive/errors.hpp"

#include "common/quoted.hpp"
#include "holdfast/errors.hpp"
#include "transport/transport.hpp"

namespace holdfast::detail {

void reply_error(Transport& transport, const std::string& key, std::string what, const Reply& reply,
                 std::function<void(std::exception_ptr)> done, std::string_view kind) {
    const std::string server = transport.config().server_name();
    if (reply.str.find("WRONGTYPE") == std::string::npos) {
        const bool oom = reply.is_error_code("OOM");
        done(std::make_exception_ptr(
            ServerError("holdfast: " + what + " " + quoted(key) + " failed on " + server + ": " + reply.str +
                        (oom ? " (the server is out of memory: free memory or raise maxmemory)" : ""))));
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
