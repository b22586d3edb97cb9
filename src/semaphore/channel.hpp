// The channel both semaphores announce free permits on, and what a message there means.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "primitive/names.hpp"

namespace holdfast::detail {

/// A message carries a number of permits (free after a release, or
/// released): it wakes up to that many waiters. A payload that is not a
/// number wakes every waiter to look.
std::size_t semaphore_wakes(std::string_view payload);

}  // namespace holdfast::detail
