// Redisson's key and channel names (../shared/redisson-layout.md, "Names").
#pragma once

#include <string>
#include <string_view>

namespace holdfast::detail {

/// `prefix:{name}`, or `prefix:name` when the name already has a `{`, so every
/// key of a lock hashes to the lock's own cluster slot.
inline std::string prefixed_name(std::string_view prefix, std::string_view name) {
    if (name.find('{') != std::string_view::npos) return std::string(prefix) + ':' + std::string(name);
    return std::string(prefix) + ":{" + std::string(name) + '}';
}

/// `{name}:suffix`, or `name:suffix` when the name already has a `{`.
inline std::string suffixed_name(std::string_view name, std::string_view suffix) {
    if (name.find('{') != std::string_view::npos) return std::string(name) + ':' + std::string(suffix);
    return '{' + std::string(name) + "}:" + std::string(suffix);
}

/// The RLock's release channel: redisson_lock__channel:{name}.
inline std::string lock_channel(std::string_view name) { return prefixed_name("redisson_lock__channel", name); }

}  // namespace holdfast::detail
