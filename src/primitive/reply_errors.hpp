// Turning a server's error reply into the failure a user should see, and the
// one way holdfast says a key holds something else than its primitive.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "errors/failure.hpp"
#include "transport/reply.hpp"

namespace holdfast::detail {

class Transport;

/// WrongTypeError: `key` on `server` holds `held` ("a list", "a string 'x' (not
/// a count)") where a `kind` of primitive ("lock", "semaphore") belongs. `what`
/// ("cannot lock"), when given, says what failed.
Failure wrong_type(std::string_view what, const std::string& key, std::string_view server, std::string_view held,
                   std::string_view kind);

/// `reply` is an error reply to an operation (`what`, e.g. "lock") on `key`.
/// WRONGTYPE becomes wrong_type() naming the key's actual type (asked with
/// TYPE) and the `kind` of primitive expected there ("lock", "semaphore");
/// anything else a ServerError of the reply's code naming the key and the
/// server, and what to do where the code says it (OOM, an ACL refusal).
void reply_error(Transport& transport, const std::string& key, std::string what, const Reply& reply,
                 std::function<void(Failure)> done, std::string_view kind = "lock");

}  // namespace holdfast::detail
