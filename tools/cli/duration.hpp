// Durations on the command line: 500ms, 2s, 1.5s, 3m, 1h, or a bare number of seconds.
#pragma once

#include <string>
#include <string_view>

#include "cli/cli.hpp"

namespace holdfast::cli {

/// Rounded up to whole milliseconds, so a non-zero duration never becomes 0.
/// Throws UsageError naming `text` when it is not a duration (negative, no
/// number, unknown unit, longer than ~30 years).
Duration parse_duration(std::string_view text);

/// The shortest readable form: 850ms, 2s, 29.873s.
std::string format_duration(Duration duration);

}  // namespace holdfast::cli
