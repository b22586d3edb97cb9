// detail::glob_matches() reads patterns as Redis does: checked against the
// server's own matcher (KEYS) on the same keys, pattern by pattern; and,
// without a server, against the answers Redis gave for each case of a table.
#include <set>

#include "inspect/glob.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

// What Redis 7.0.15 (Debian's redis-server) answered, each row recorded by
// FLUSHALL, SET <text> 1, KEYS <pattern> on a server of its own: one case of
// the matcher each, so a build without redis-server checks it too.
struct Matched {
    const char* case_name;
    const char* pattern;
    const char* text;
    bool matches;
};

void PrintTo(const Matched& m, std::ostream* os) { *os << "'" << m.pattern << "' on '" << m.text << "'"; }

class GlobAsRedisAnswered : public ::testing::TestWithParam<Matched> {};

TEST_P(GlobAsRedisAnswered, Matches) {
    EXPECT_EQ(detail::glob_matches(GetParam().pattern, GetParam().text), GetParam().matches);
}

INSTANTIATE_TEST_SUITE_P(
    Redis70, GlobAsRedisAnswered,
    ::testing::Values(
        Matched{"star_matches_all", "*", "orders", true},
        Matched{"prefix", "orders*", "orders:42", true},
        Matched{"prefix_longer_than_text", "orders*", "order", false},
        Matched{"question_one_byte", "order?", "orders", true},
        Matched{"question_needs_a_byte", "order?", "order", false},
        Matched{"star_inside", "o*s", "orders", true},
        Matched{"star_inside_tail_must_match", "o*s", "ordersx", false},
        Matched{"stars_in_a_row", "**o**", "foo", true},
        Matched{"escaped_star_is_a_star", "a\\*b", "a*b", true},
        Matched{"escaped_star_matches_nothing_else", "a\\*b", "aXb", false},
        Matched{"escaped_question_is_a_question", "a\\?b", "a?b", true},
        Matched{"escaped_question_matches_nothing_else", "a\\?b", "aXb", false},
        Matched{"star_in_a_set", "a[*]b", "a*b", true},
        Matched{"set", "a[bc]d", "acd", true},
        Matched{"set_misses", "a[bc]d", "aXd", false},
        Matched{"negated_set_misses", "a[^X]b", "aXb", false},
        Matched{"negated_set", "a[^X]b", "aYb", true},
        Matched{"range", "a[a-c]b", "abb", true},
        Matched{"range_misses", "a[a-c]b", "adb", false},
        Matched{"reversed_range", "a[c-a]b", "abb", true},
        Matched{"dash_before_close_is_a_range_to_the_bracket", "[a-]*", "-x", false},
        Matched{"lone_dash_in_a_set", "[-]", "-", true},
        Matched{"unclosed_set_is_not_a_bracket", "a[b", "a[b", false},
        Matched{"unclosed_set_ends_at_the_pattern_end", "a[b", "ab", true},
        Matched{"empty_unclosed_set_never_matches", "a[", "a[", false},
        Matched{"escaped_bracket_in_a_set", "[\\]]b", "]b", true},
        Matched{"trailing_backslash_is_a_backslash", "*\\", "x\\", true},
        Matched{"lone_backslash", "\\", "\\", true},
        Matched{"escaped_backslash", "a\\\\b", "a\\b", true},
        Matched{"case_sensitive", "ABC", "abc", false},
        Matched{"case_sensitive_prefix", "abc*", "ABC", false},
        Matched{"empty_negated_set_is_any_byte", "a[^]b", "a]b", true},
        Matched{"question_is_one_byte_not_one_character", "?", "\xc3\xa9", false},
        Matched{"two_bytes_of_one_character", "??", "\xc3\xa9", true},
        Matched{"braces_are_plain", "{x}*", "{x}:timeout", true},
        Matched{"trailing_backslash_needs_its_byte", "a\\", "a", false},
        Matched{"range_then_dash", "[a-c-e]", "d", false},
        Matched{"escaped_dash_is_not_a_backslash", "[\\-]", "\\", false}),
    [](const auto& info) { return std::string(info.param.case_name); });

// The escaped form of each pattern character, and what it matches.
TEST(GlobEscaped, EscapesEachPatternCharacterAndNothingElse) {
    EXPECT_EQ(detail::glob_escaped("t[1]*:x?\\"), "t\\[1\\]\\*:x\\?\\\\");
    EXPECT_EQ(detail::glob_escaped("plain-{tag}:name"), "plain-{tag}:name");
    for (const std::string text : {"t[1]*:x", "a?b", "\\", "[^]"}) {
        EXPECT_TRUE(detail::glob_matches(detail::glob_escaped(text), text)) << text;
        EXPECT_FALSE(detail::glob_matches(detail::glob_escaped(text), text + "x")) << text;
    }
    EXPECT_FALSE(detail::glob_matches(detail::glob_escaped("a?b"), "aXb"));
}

using Glob = RedisTest;

TEST_F(Glob, MatchesWhatRedisMatches) {
    const std::vector<std::string> keys{"orders", "orders:42", "order", "o", "", "a*b", "a?b", "a[b", "a]b", "a\\b",
                                        "ab", "aXb", "abc", "ABC", "b-fair", "c-doc", "{x}:timeout", "x-y", "-",
                                        "^a", "zz", "a\xc3\xa9"};
    for (const auto& key : keys)
        if (!key.empty()) raw->command({"SET", key, "1"});
    const std::vector<std::string> patterns{
        "*",      "orders*", "order?",  "*:*",     "o*s",   "a?b",   "a\\*b", "a\\?b",   "a[*]b", "a[?]b",  "a[[]b",
        "a\\[b",  "a]b",     "a\\\\b",  "a[^X]b",  "a[a-c]b", "a[c-a]?", "[ab]*", "[^a]*", "[a-]*", "*[xz]*", "**o**",
        "?",      "??",      "*\\",     "a[b",     "a[",    "[",     "\\",    "ABC",     "abc*",  "a*c",   "*-*",
        "[-]",    "[\\-]",   "[\\]]b",  "a[^]b",   "a\xc3?", "{x}*", "\\{x\\}:*", "*t"};
    for (const auto& pattern : patterns) {
        std::set<std::string> by_redis;
        auto reply = raw->command({"KEYS", pattern});
        for (std::size_t i = 0; i < reply->elements; ++i) by_redis.insert(reply->element[i]->str);
        std::set<std::string> by_us;
        for (const auto& key : keys)
            if (!key.empty() && detail::glob_matches(pattern, key)) by_us.insert(key);
        EXPECT_EQ(by_us, by_redis) << "pattern '" << pattern << "'";
    }
}

// glob_escaped() makes a pattern that Redis and glob_matches() both read as the text itself.
TEST_F(Glob, AnEscapedTextMatchesItselfOnly) {
    const std::vector<std::string> keys{"t[1]*:x", "t1:x", "t]:x", "t\\:x", "tX:x", "t?:x"};
    for (const auto& key : keys) raw->command({"SET", key, "1"});
    for (const auto& key : keys) {
        const std::string pattern = detail::glob_escaped(key);
        auto reply = raw->command({"KEYS", pattern});
        ASSERT_EQ(reply->elements, 1u) << pattern;
        EXPECT_EQ(std::string(reply->element[0]->str), key);
        for (const auto& other : keys)
            EXPECT_EQ(detail::glob_matches(pattern, other), other == key) << pattern << " vs " << other;
    }
}

}  // namespace
}  // namespace holdfast::testing
