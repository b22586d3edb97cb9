// A transparent hash for maps keyed by names (lock keys, owner ids,
// channels): looked up by std::string_view without making a string. Names
// share long prefixes ("redisson_lock__channel:{orders:"), which an ordered
// map compares again at every level; a hash reads each name once.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

namespace holdfast::detail {

struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const noexcept { return std::hash<std::string_view>{}(name); }
};

}  // namespace holdfast::detail
