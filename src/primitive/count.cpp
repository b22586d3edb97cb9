#include "primitive/count.hpp"

#include <charconv>

#include "common/quoted.hpp"
#include "primitive/call.hpp"
#include "primitive/reply_errors.hpp"
#include "transport/transport.hpp"

namespace holdfast::detail {

std::optional<std::int64_t> parse_count(std::string_view text) {
    std::int64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [stop, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || stop != end) return std::nullopt;
    return value;
}

std::optional<std::int64_t> count_in(const Reply& reply) {
    if (reply.is_nil()) return 0;
    if (reply.is_integer()) return reply.integer;
    return parse_count(reply.str);
}

Failure not_a_count(Transport& transport, const Reply& reply, const std::string& key, std::string_view kind) {
    return wrong_type({}, key, transport.config().server_name(), "a string " + quoted(reply.str) + " (not a count)",
                      kind);
}

void ask_count(Transport& transport, const std::string& key, std::string what, std::string_view kind,
               std::function<void(Failure, std::int64_t)> done) {
    ask(transport, key, std::move(what), {"GET", key},
        [&transport, key, kind = std::string(kind), done = std::move(done)](Failure error, Reply reply) {
            if (error) return done(std::move(error), 0);
            const auto count = count_in(reply);
            if (!count) return done(not_a_count(transport, reply, key, kind), 0);
            done({}, *count);
        },
        kind);
}

std::int64_t stored_count(Transport& transport, const Reply& reply, const std::string& key, std::string_view kind) {
    const auto count = count_in(reply);
    if (!count) not_a_count(transport, reply, key, kind).raise();
    return *count;
}

}  // namespace holdfast::detail
