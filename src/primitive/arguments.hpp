// Checks of the arguments every primitive takes, with the same messages everywhere.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

namespace holdfast::detail {

inline void check_lease(std::optional<std::chrono::milliseconds> lease) {
    if (lease && *lease <= std::chrono::milliseconds::zero())
        throw std::invalid_argument("holdfast: lease must be > 0 ms, got " + std::to_string(lease->count()) + " ms");
}

inline void check_wait(std::chrono::milliseconds wait) {
    if (wait < std::chrono::milliseconds::zero())
        throw std::invalid_argument("holdfast: wait must be >= 0 ms, got " + std::to_string(wait.count()) + " ms");
}

}  // namespace holdfast::detail
