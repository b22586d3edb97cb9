// Calling a primitive's script: its reply, a Redis error reply turned into an
// exception that names the primitive, and the hold counts scripts store.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "primitive/acquire.hpp"
#include "transport/reply.hpp"
#include "transport/script.hpp"
#include "transport/transport.hpp"

namespace holdfast::detail {


using ReplyHandler = std::function<void(std::exception_ptr error, Reply reply)>;

/// A hold count as stored in a lock's hash; anything else means the key is
/// not a lock (WrongTypeError naming the key, `server` and the field).
std::int64_t hold_count_of(std::string_view server, const std::string& name, const std::string& field,
                           const std::string& value);

/// Runs one acquire script and turns its reply into an Attempt: nil is
/// taken, an integer is the holder's PTTL, a Redis error becomes an exception
/// naming the lock (WRONGTYPE: WrongTypeError).
void attempt_script(Transport& transport, const Script& script, std::vector<std::string> keys,
                    std::vector<std::string> args, const std::string& name, std::string_view noun,
                    std::function<void(Attempt)> report);

/// Evaluates `script` and hands on its reply, turning a Redis error reply into
/// an exception naming `name`, what was being done and the `kind` of
/// primitive expected under `name` (see reply_error).
void eval_reporting(Transport& transport, const Script& script, std::vector<std::string> keys,
                    std::vector<std::string> args, const std::string& name, std::string what, ReplyHandler done,
                    std::string_view kind = "lock");

}  // namespace holdfast::detail
