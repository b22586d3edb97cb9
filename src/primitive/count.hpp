// Counts that primitives keep in a Redis string: a semaphore's free permits,
// a latch's count. Decimal ASCII, as Redisson writes them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "transport/reply.hpp"

namespace holdfast::detail {

class Transport;

/// The decimal integer `text` holds, or nullopt if it holds anything else.
std::optional<std::int64_t> parse_count(std::string_view text);

/// The count in a GET reply on `key`: nil (no key) is 0. A string that is not
/// a count means the key is not a `kind` ("semaphore"): WrongTypeError naming
/// the key, the server and what the key holds.
std::int64_t stored_count(Transport& transport, const Reply& reply, const std::string& key, std::string_view kind);

}  // namespace holdfast::detail
