// Glob patterns as Redis reads them (SCAN MATCH, KEYS): find_names() checks
// names against the user's pattern itself when SCAN can only be asked for a
// superset (a key prefix, side keys whose name sits inside braces).
#pragma once

#include <string>
#include <string_view>

namespace holdfast::detail {

/// Whether `text` matches `pattern`: `*` any run, `?` one byte, `[abc]`,
/// `[^abc]`, `[a-z]` one byte of (or not of) a set, `\x` the byte x; case
/// sensitive, as Redis's matcher without NOCASE.
bool glob_matches(std::string_view pattern, std::string_view text);

/// `text` with `*`, `?`, `[`, `]` and `\` escaped: a pattern matching only it.
std::string glob_escaped(std::string_view text);

}  // namespace holdfast::detail
