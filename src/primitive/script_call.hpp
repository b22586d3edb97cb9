// Calling a primitive's script: its reply, a Redis error reply turned into a
// failure that names the primitive, and the hold counts scripts store.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "primitive/acquire.hpp"
#include "transport/reply.hpp"
#include "transport/script.hpp"
#include "transport/transport.hpp"

namespace holdfast::detail {

/// The hold count a lock's hash field holds, or nullopt if `value` is none.
std::optional<std::int64_t> hold_count_in(const std::string& value);

/// WrongTypeError: the hash `name` on `server` is no lock, its field `field` holding `value`.
Failure not_a_lock(std::string_view server, const std::string& name, const std::string& field,
                   const std::string& value);

/// hold_count_in(value), or throws not_a_lock().
std::int64_t hold_count_of(std::string_view server, const std::string& name, const std::string& field,
                           const std::string& value);

/// Views of `strings`, for the spans of eval_reporting() and Transport::eval().
inline std::vector<std::string_view> views_of(const std::vector<std::string>& strings) {
    return {strings.begin(), strings.end()};
}

/// Runs one acquire script and turns its reply into an Attempt: nil is
/// taken, an integer is the holder's PTTL, a Redis error becomes a failure
/// naming the lock (WRONGTYPE: WrongTypeError). `name` is the attempt's hold
/// key, kept by reference until `report` runs (the operation outlives it);
/// `noun` a literal.
void attempt_script(Transport& transport, const Script& script, std::initializer_list<std::string_view> keys,
                    std::initializer_list<std::string_view> args, const std::string& name, std::string_view noun,
                    std::function<void(Attempt)> report);

/// Evaluates `script` and hands on its reply, turning a Redis error reply into
/// a failure naming `name`, what was being done and the `kind` of primitive
/// expected under `name` (see reply_error).
/// Keys and arguments are views: the command is encoded before this returns.
void eval_reporting(Transport& transport, const Script& script, std::span<const std::string_view> keys,
                    std::span<const std::string_view> args, std::string_view name, std::string what,
                    ReplyHandler done, std::string_view kind = "lock");
inline void eval_reporting(Transport& transport, const Script& script, std::initializer_list<std::string_view> keys,
                           std::initializer_list<std::string_view> args, std::string_view name, std::string what,
                           ReplyHandler done, std::string_view kind = "lock") {
    eval_reporting(transport, script, std::span(keys.begin(), keys.size()), std::span(args.begin(), args.size()),
                   name, std::move(what), std::move(done), kind);
}

}  // namespace holdfast::detail
