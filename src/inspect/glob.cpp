#include "inspect/glob.hpp"

#include <utility>

namespace holdfast::detail {
namespace {

// Whether `c` is in the class that starts at pattern[at] == '['; `next` is
// set past its closing ']' (or to the end: an unclosed class runs to the end,
// as Redis reads it).
bool in_class(std::string_view pattern, std::size_t at, char c, std::size_t& next) {
    std::size_t i = at + 1;
    const bool negated = i < pattern.size() && pattern[i] == '^';
    if (negated) ++i;
    bool found = false;
    while (i < pattern.size() && pattern[i] != ']') {
        if (pattern[i] == '\\' && i + 1 < pattern.size()) {
            found = found || pattern[i + 1] == c;
            i += 2;
        } else if (i + 2 < pattern.size() && pattern[i + 1] == '-') {
            // As Redis: any byte may end a range, `]` too; bytes compare as `char`.
            char low = pattern[i], high = pattern[i + 2];
            if (low > high) std::swap(low, high);
            found = found || (c >= low && c <= high);
            i += 3;
        } else {
            found = found || pattern[i] == c;
            ++i;
        }
    }
    next = i < pattern.size() ? i + 1 : i;
    return found != negated;
}

}  // namespace

bool glob_matches(std::string_view pattern, std::string_view text) {
    constexpr std::size_t none = std::string_view::npos;
    std::size_t p = 0, t = 0;
    // The last `*` seen, and where in the text its run ends so far: on a
    // mismatch the run grows by one byte and matching resumes after the `*`.
    std::size_t star = none, star_end = 0;
    while (t < text.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = ++p;
            star_end = t;
            continue;
        }
        if (p < pattern.size()) {
            std::size_t next = p + 1;
            bool matched;
            if (pattern[p] == '?') {
                matched = true;
            } else if (pattern[p] == '[') {
                matched = in_class(pattern, p, text[t], next);
            } else if (pattern[p] == '\\' && p + 1 < pattern.size()) {
                matched = pattern[p + 1] == text[t];
                next = p + 2;
            } else {
                matched = pattern[p] == text[t];
            }
            if (matched) {
                p = next;
                ++t;
                continue;
            }
        }
        if (star == none) return false;
        p = star;
        t = ++star_end;
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

std::string glob_escaped(std::string_view text) {
    std::string escaped;
    for (const char c : text) {
        if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') escaped += '\\';
        escaped += c;
    }
    return escaped;
}

}  // namespace holdfast::detail
