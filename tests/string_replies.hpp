// Replies as the server sends them, for the tests that read them back
// without a server.
#pragma once

#include <string>
#include <vector>

#include "transport/reply.hpp"

namespace holdfast::testing {

/// A flat reply of strings, HGETALL's shape: field, value, field, value...
inline std::vector<detail::Reply> string_replies(const std::vector<std::string>& flat) {
    std::vector<detail::Reply> replies;
    for (const auto& s : flat) {
        detail::Reply element;
        element.type = detail::Reply::Type::string;
        element.str = s;
        replies.push_back(std::move(element));
    }
    return replies;
}

}  // namespace holdfast::testing
