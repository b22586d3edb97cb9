// How error messages and the CLI show a name (common/quoted.hpp): printable
// ASCII and valid UTF-8 as they are; control bytes, C1 controls, invalid
// UTF-8 (RFC 3629: overlong forms, surrogates, past U+10FFFF, cut or broken
// sequences) and the backslash escaped; a name past quoted_limit bytes cut.
// No server.
#include "common/quoted.hpp"

#include <gtest/gtest.h>

#include <string>

namespace holdfast::detail {
namespace {

struct Shown {
    const char* case_name;
    std::string name;
    std::string shown;  // what quoted(name) must give
};

void PrintTo(const Shown& shown, std::ostream* os) { *os << shown.case_name; }

class Quoted : public ::testing::TestWithParam<Shown> {};

TEST_P(Quoted, ShowsTheNameAsExpected) { EXPECT_EQ(detail::quoted(GetParam().name), GetParam().shown); }

using namespace std::string_literals;

// 127 'a' and one more byte (or sequence): where the cut falls.
const std::string a127(127, 'a');

INSTANTIATE_TEST_SUITE_P(
    Names, Quoted,
    ::testing::Values(
        Shown{"plain", "orders:42", "'orders:42'"}, Shown{"empty", "", "''"},
        Shown{"space_and_quote", "it's a job", "'it's a job'"},
        Shown{"newline", "a\nb", "'a\\nb'"}, Shown{"carriage_return", "a\rb", "'a\\rb'"},
        Shown{"tab", "a\tb", "'a\\tb'"}, Shown{"backslash", "a\\b", "'a\\\\b'"},
        Shown{"nul", "a\0b"s, "'a\\x00b'"}, Shown{"escape", "\x1b[31m", "'\\x1b[31m'"},
        Shown{"delete", "a\x7f", "'a\\x7f'"},
        Shown{"two_byte_utf8", "caf\xc3\xa9", "'caf\xc3\xa9'"},
        Shown{"c1_control_u0085", "a\xc2\x85", "'a\\xc2\\x85'"},
        Shown{"c1_csi_u009b", "\xc2\x9b" "31m", "'\\xc2\\x9b31m'"},
        Shown{"first_after_c1_u00a0", "\xc2\xa0", "'\xc2\xa0'"},
        Shown{"overlong_two_bytes", "\xc0\xaf", "'\\xc0\\xaf'"},
        Shown{"overlong_c1_lead", "\xc1\xbf", "'\\xc1\\xbf'"},
        Shown{"three_byte_utf8", "\xe2\x82\xac", "'\xe2\x82\xac'"},
        Shown{"overlong_three_bytes", "\xe0\x80\xaf", "'\\xe0\\x80\\xaf'"},
        Shown{"last_before_surrogates", "\xed\x9f\xbf", "'\xed\x9f\xbf'"},
        Shown{"surrogate", "\xed\xa0\x80", "'\\xed\\xa0\\x80'"},
        Shown{"four_byte_utf8", "\xf0\x9f\x98\x80", "'\xf0\x9f\x98\x80'"},
        Shown{"overlong_four_bytes", "\xf0\x8f\xbf\xbf", "'\\xf0\\x8f\\xbf\\xbf'"},
        Shown{"last_code_point", "\xf4\x8f\xbf\xbf", "'\xf4\x8f\xbf\xbf'"},
        Shown{"past_u10ffff", "\xf4\x90\x80\x80", "'\\xf4\\x90\\x80\\x80'"},
        Shown{"lead_f5", "\xf5\x80\x80\x80", "'\\xf5\\x80\\x80\\x80'"},
        Shown{"sequence_cut_by_the_end", "a\xe2\x82", "'a\\xe2\\x82'"},
        Shown{"broken_continuation", "\xe2(\xa1", "'\\xe2(\\xa1'"},
        Shown{"lone_continuation", "\x80x", "'\\x80x'"},
        Shown{"at_the_limit", std::string(128, 'n'), "'" + std::string(128, 'n') + "'"},
        Shown{"one_past_the_limit", std::string(129, 'n'), "'" + std::string(128, 'n') + "'... (129 bytes)"},
        Shown{"escapes_count_as_one_byte", std::string(129, '\n'),
              "'" + [] { std::string s; for (int i = 0; i < 128; ++i) s += "\\n"; return s; }() + "'... (129 bytes)"},
        // A sequence that starts before the limit is shown whole, then cut.
        Shown{"sequence_across_the_limit", a127 + "\xc3\xa9" + "b", "'" + a127 + "\xc3\xa9'... (130 bytes)"},
        Shown{"sequence_ending_the_name_past_the_limit", a127 + "\xc3\xa9", "'" + a127 + "\xc3\xa9'"}),
    [](const auto& info) { return std::string(info.param.case_name); });

// printable(): the same, without the quotes.
TEST(Printable, IsTheQuotedFormWithoutQuotes) {
    EXPECT_EQ(detail::printable("job"), "job");
    EXPECT_EQ(detail::printable("bad\xff\n"), "bad\\xff\\n");
    EXPECT_EQ(detail::printable(""), "");
}

TEST(Printable, CutsALongNameAsQuotedDoes) {
    EXPECT_EQ(detail::printable(std::string(200, 'x')), std::string(128, 'x') + "... (200 bytes)");
}

}  // namespace
}  // namespace holdfast::detail
