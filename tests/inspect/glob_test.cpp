// detail::glob_matches() reads patterns as Redis does: checked against the
// server's own matcher (KEYS) on the same keys, pattern by pattern.
#include <set>

#include "inspect/glob.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

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
