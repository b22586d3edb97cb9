// A group lock's hash read back for inspect() (multi_value_lock/layout.hpp):
// per value, `<field>` -> owner, `<field>:<owner>:expire_time` and
// `<field>:<owner>:lock_count`; any other shape is no group. From HGETALL
// replies as the server sends them. No server.
#include "multi_value_lock/layout.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "string_replies.hpp"

namespace holdfast::detail {
namespace {

// HGETALL's flat reply: field, value, field, value...
std::vector<Reply> hgetall(const std::vector<std::string>& flat) { return holdfast::testing::string_replies(flat); }

// Two values' fields (Redisson's, of "Jack_001" and "Mary_002").
const std::string jack = "7pNoDdizVy2xY792MaFv+w", mary = "kIX2DFOX4IWct7G7K6tV9A";

TEST(GroupValueField, IsTwentyTwoCharactersOfBase64) {
    EXPECT_TRUE(is_value_field(jack));
    EXPECT_TRUE(is_value_field("AAAAAAAAAAAAAAAAAAAAA/"));
    EXPECT_FALSE(is_value_field(jack.substr(1)));           // 21
    EXPECT_FALSE(is_value_field(jack + "A"));               // 23
    EXPECT_FALSE(is_value_field("7pNoDdizVy2xY792MaFv-w"));  // '-' is URL-safe Base64, not Redisson's
    EXPECT_FALSE(is_value_field("7pNoDdizVy2xY792MaFv=w"));
    EXPECT_FALSE(is_value_field(""));
}

TEST(GroupValues, ReadsEachValuesOwnerCountAndExpiry) {
    const auto values = group_values(hgetall({jack, "o1", jack + ":o1:expire_time", "1700000000000",
                                              jack + ":o1:lock_count", "2", mary, "o2", mary + ":o2:lock_count",
                                              "1", mary + ":o2:expire_time", "1700000005000"}));
    ASSERT_TRUE(values);
    ASSERT_EQ(values->size(), 2u);
    EXPECT_EQ((*values)[0].field, jack);
    EXPECT_EQ((*values)[0].owner, "o1");
    EXPECT_EQ((*values)[0].hold_count, 2);
    EXPECT_EQ((*values)[0].expires_ms, 1700000000000);
    EXPECT_EQ((*values)[1].field, mary);
    EXPECT_EQ((*values)[1].owner, "o2");
    EXPECT_EQ((*values)[1].hold_count, 1);
    EXPECT_EQ((*values)[1].expires_ms, 1700000005000);
}

// An owner id holds colons (Redisson's "<uuid>:<thread>"): the side fields are matched whole.
TEST(GroupValues, AnOwnerWithColonsIsMatchedWhole) {
    const auto values =
        group_values(hgetall({jack, "b1c2:42", jack + ":b1c2:42:lock_count", "3", jack + ":b1c2:42:expire_time", "9"}));
    ASSERT_TRUE(values);
    ASSERT_EQ(values->size(), 1u);
    EXPECT_EQ((*values)[0].hold_count, 3);
    EXPECT_EQ((*values)[0].expires_ms, 9);
}

// Side fields of another owner belong to no value held: the value shows no count or expiry.
TEST(GroupValues, AValueWithoutItsSideFieldsHasNoCountOrExpiry) {
    const auto values = group_values(hgetall({jack, "o1", jack + ":o2:lock_count", "1", mary, "o3",
                                              mary + ":o3:lock_count", "4"}));
    ASSERT_TRUE(values);
    ASSERT_EQ(values->size(), 2u);
    EXPECT_EQ((*values)[0].hold_count, 0);
    EXPECT_EQ((*values)[0].expires_ms, std::nullopt);
    EXPECT_EQ((*values)[1].hold_count, 4);
    EXPECT_EQ((*values)[1].expires_ms, std::nullopt);
}

TEST(GroupValues, AHashWithoutSideFieldsIsNoGroup) {
    EXPECT_EQ(group_values(hgetall({jack, "o1"})), std::nullopt);
    EXPECT_EQ(group_values({}), std::nullopt);
}

// A lock's hash (an owner's hold count) has fields of another shape.
TEST(GroupValues, AFieldOfAnotherShapeIsNoGroup) {
    EXPECT_EQ(group_values(hgetall({"b1c2:42", "1"})), std::nullopt);
    EXPECT_EQ(group_values(hgetall({jack, "o1", jack + ":o1:lock_count", "1", "mode", "read"})), std::nullopt);
    EXPECT_EQ(group_values(hgetall({jack, "o1", jack + ":o1:lock_count", "1", jack + ":o1:ttl", "5"})), std::nullopt);
}

// "<field>:<owner>:lock_count" needs its ':' right after 22 Base64 characters, and an owner.
TEST(GroupValues, ASideFieldWithoutAValueFieldBeforeItIsNoGroup) {
    EXPECT_EQ(group_values(hgetall({jack, "o1", jack + "x:o1:lock_count", "1"})), std::nullopt);
    EXPECT_EQ(group_values(hgetall({jack, "o1", "short:o1:lock_count", "1"})), std::nullopt);
    EXPECT_EQ(group_values(hgetall({jack, "o1", jack + ":lock_count", "1"})), std::nullopt);
    EXPECT_EQ(group_values(hgetall({jack, "o1", "-pNoDdizVy2xY792MaFv+w:o1:lock_count", "1"})), std::nullopt);
}

TEST(GroupValues, ACountOrExpiryThatIsNoIntegerIsNoGroup) {
    EXPECT_EQ(group_values(hgetall({jack, "o1", jack + ":o1:lock_count", "two"})), std::nullopt);
    EXPECT_EQ(group_values(hgetall({jack, "o1", jack + ":o1:expire_time", "1.5"})), std::nullopt);
}

}  // namespace
}  // namespace holdfast::detail
