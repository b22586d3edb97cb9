#include "cli/duration.hpp"

#include <charconv>
#include <cmath>

namespace holdfast::cli {
namespace {

// Past this, steady_clock::now() + duration could overflow inside the library.
constexpr double max_ms = 1e12;

[[noreturn]] void bad_duration(std::string_view text, std::string_view why) {
    throw UsageError("bad duration '" + std::string(text) + "': " + std::string(why) +
                     " (expected e.g. 500ms, 2s, 1.5s, 3m, 1h, or a number of seconds)");
}

double unit_ms(std::string_view text, std::string_view unit) {
    if (unit.empty() || unit == "s") return 1e3;
    if (unit == "ms") return 1;
    if (unit == "m") return 60e3;
    if (unit == "h") return 3600e3;
    bad_duration(text, "unknown unit '" + std::string(unit) + "'");
}

}  // namespace

Duration parse_duration(std::string_view text) {
    const auto number_end = text.find_first_not_of("0123456789.");
    const std::string_view number = text.substr(0, number_end);
    const std::string_view unit = number_end == std::string_view::npos ? "" : text.substr(number_end);
    if (number.empty()) bad_duration(text, "it does not start with a number");

    double value = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || end != number.data() + number.size()) bad_duration(text, "malformed number");

    const double ms = std::ceil(value * unit_ms(text, unit));
    if (ms > max_ms) bad_duration(text, "too long");
    return Duration(static_cast<Duration::rep>(ms));
}

std::string format_duration(Duration duration) {
    const auto ms = duration.count();
    if (ms < 1000) return std::to_string(ms) + "ms";
    std::string text = std::to_string(ms / 1000);
    if (const auto fraction = ms % 1000; fraction != 0) {
        std::string digits = std::to_string(1000 + fraction).substr(1);  // zero-padded to 3
        digits.erase(digits.find_last_not_of('0') + 1);
        text += '.' + digits;
    }
    return text + 's';
}

}  // namespace holdfast::cli
