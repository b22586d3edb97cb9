// A transparent hash for maps keyed by names (lock keys, owner ids,
// channels): looked up by std::string_view without making a string. Names
// share long prefixes ("redisson_lock__channel:{orders:"), which an ordered
// map compares again at every level; a hash reads each name once.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

namespace holdfast::detail {

// Not noexcept on purpose: libstdc++ then keeps each name's hash in its node,
// so a lookup compares hashes before names, and a rehash reads no name again.
struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
};

}  // namespace holdfast::detail
