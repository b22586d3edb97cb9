// The counts a semaphore and a latch keep in a Redis string
// (primitive/count.hpp): decimal ASCII as Redisson writes it, read from a GET
// reply. No server.
#include "primitive/count.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace holdfast::detail {
namespace {

struct Stored {
    const char* case_name;
    std::string text;
    std::optional<std::int64_t> count;  // nullopt: not a count
};

void PrintTo(const Stored& s, std::ostream* os) { *os << "'" << s.text << "'"; }

class ParseCount : public ::testing::TestWithParam<Stored> {};

TEST_P(ParseCount, ReadsOnlyADecimalInt64) { EXPECT_EQ(parse_count(GetParam().text), GetParam().count); }

INSTANTIATE_TEST_SUITE_P(
    Texts, ParseCount,
    ::testing::Values(Stored{"zero", "0", 0}, Stored{"positive", "42", 42}, Stored{"negative", "-3", -3},
                      Stored{"leading_zeros_are_decimal", "010", 10},
                      Stored{"largest", "9223372036854775807", std::numeric_limits<std::int64_t>::max()},
                      Stored{"smallest", "-9223372036854775808", std::numeric_limits<std::int64_t>::min()},
                      Stored{"one_past_the_largest", "9223372036854775808", std::nullopt},
                      Stored{"empty", "", std::nullopt}, Stored{"plus_sign", "+1", std::nullopt},
                      Stored{"space_before", " 1", std::nullopt}, Stored{"space_after", "1 ", std::nullopt},
                      Stored{"fraction", "1.5", std::nullopt}, Stored{"hex", "0x10", std::nullopt},
                      Stored{"exponent", "1e3", std::nullopt}, Stored{"word", "ada", std::nullopt},
                      Stored{"nul_after_digits", std::string("7\0", 2), std::nullopt}),
    [](const auto& info) { return std::string(info.param.case_name); });

Reply reply_of(Reply::Type type, std::string str = {}, long long integer = 0) {
    Reply reply;
    reply.type = type;
    reply.str = std::move(str);
    reply.integer = integer;
    return reply;
}

// GET's reply: no key is a count of 0, as Redisson reads it.
TEST(CountIn, NoKeyIsZero) { EXPECT_EQ(count_in(reply_of(Reply::Type::nil)), 0); }

TEST(CountIn, AStringIsParsedAndAnIntegerTakenAsItIs) {
    EXPECT_EQ(count_in(reply_of(Reply::Type::string, "17")), 17);
    EXPECT_EQ(count_in(reply_of(Reply::Type::integer, "", -4)), -4);
    EXPECT_EQ(count_in(reply_of(Reply::Type::string, "seventeen")), std::nullopt);
}

}  // namespace
}  // namespace holdfast::detail
