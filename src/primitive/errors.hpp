// Turning a server's error reply into the exception a user should see.
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <string_view>

#include "transport/reply.hpp"

namespace holdfast::detail {

class Transport;

/// `reply` is an error reply to an operation (`what`, e.g. "lock") on `key`.
/// WRONGTYPE becomes WrongTypeError naming the key's actual type (asked with
/// TYPE) and the `kind` of primitive expected there ("lock", "semaphore");
/// anything else a ServerError naming the key and the server.
void reply_error(Transport& transport, const std::string& key, std::string what, const Reply& reply,
                 std::function<void(std::exception_ptr)> done, std::string_view kind = "lock");

}  // namespace holdfast::detail
