// How error messages show a name (a lock, a key, an owner id): quoted, with
// bytes that cannot be printed escaped and a huge name cut short, so a binary
// or 1 MiB name garbles no terminal and floods no log.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace holdfast::detail {

/// Bytes of a name an error message shows before cutting it short.
inline constexpr std::size_t quoted_limit = 128;

/// 'name', with control bytes (C1 controls too), invalid UTF-8 and the
/// backslash escaped (\xNN; \n, \r, \t, \\ as such), and a name longer than
/// quoted_limit bytes cut there and followed by "... (N bytes)". Valid UTF-8
/// is shown as it is.
std::string quoted(std::string_view name);

/// The same without the quotes, for a name (or an owner id, a token) that
/// stands on its own in the command line tool's output: "job: free".
std::string printable(std::string_view name);

}  // namespace holdfast::detail
