#include "primitive/count.hpp"

#include <charconv>

#include "holdfast/errors.hpp"
#include "transport/transport.hpp"

namespace holdfast::detail {

std::optional<std::int64_t> parse_count(std::string_view text) {
    std::int64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [stop, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || stop != end) return std::nullopt;
    return value;
}

std::int64_t stored_count(Transport& transport, const Reply& reply, const std::string& key, std::string_view kind) {
    if (reply.is_nil()) return 0;
    if (reply.is_integer()) return reply.integer;
    if (const auto count = parse_count(reply.str)) return *count;
    std::string shown = reply.str.size() > 40 ? reply.str.substr(0, 40) + "..." : reply.str;
    throw WrongTypeError("holdfast: '" + key + "' on " + transport.config().server_name() + " is a string but not a " +
                         std::string(kind) + ": it holds '" + shown +
                         "', not a count; pick another name or delete the key");
}

}  // namespace holdfast::detail
