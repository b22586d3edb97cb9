// Counts that primitives keep in a Redis string: a semaphore's free permits,
// a latch's count. Decimal ASCII, as Redisson writes them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "errors/failure.hpp"
#include "transport/reply.hpp"

namespace holdfast::detail {

class Transport;

/// The decimal integer `text` holds, or nullopt if it holds anything else.
std::optional<std::int64_t> parse_count(std::string_view text);

/// The count in a GET reply: nil (no key) is 0; nullopt for a string that is not a count.
std::optional<std::int64_t> count_in(const Reply& reply);

/// WrongTypeError: `key` holds `reply`, a string that is not a count, so it
/// is not a `kind` ("semaphore"). Names the key, the server and what it holds.
Failure not_a_count(Transport& transport, const Reply& reply, const std::string& key, std::string_view kind);

/// GETs `key` (for `what`, e.g. "query semaphore"): `done` gets the count it
/// holds (0 when there is no key), or the error: not_a_count() for a string
/// that is no count, reply_error() for an error reply.
void ask_count(Transport& transport, const std::string& key, std::string what, std::string_view kind,
               std::function<void(Failure, std::int64_t)> done);

/// count_in(reply), or throws not_a_count().
std::int64_t stored_count(Transport& transport, const Reply& reply, const std::string& key, std::string_view kind);

}  // namespace holdfast::detail
