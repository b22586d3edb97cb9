// The checks a Config passes before a Client runs on it.
#pragma once

#include "holdfast/config.hpp"

namespace holdfast::detail {

/// Throws std::invalid_argument naming the first bad field ("Config::timeout
/// must be > 0") and what it must be.
void validate(const Config& config);

}  // namespace holdfast::detail
