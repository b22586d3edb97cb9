// The group lock's field names match Redisson's for the same bytes.
//
// How the expected fields were obtained: Redisson 4.7.0's own
// org.redisson.misc.Hash and HighwayHash classes (tag redisson-4.7.0),
// compiled with javac against Debian's netty 4.1.48 jars (netty-buffer,
// netty-common, netty-codec) outside this repository, and run on each value's
// UTF-8 bytes (what StringCodec encodes a String as):
// Hash.hash128toBase64(Unpooled.wrappedBuffer(bytes)). The 128-bit results
// were also checked against Google's reference HighwayHash (Debian's
// libhighwayhash-dev, portable target, the same key) for every length from 0
// to 100 bytes; they agreed.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "holdfast/multi_value_lock.hpp"
#include "multi_value_lock/field.hpp"

namespace holdfast::testing {
namespace {

// Lengths that reach every path of the hash: empty, each size mod 4, a
// remainder with and without its 16-byte bit, whole 32-byte packets, and
// packets plus a remainder; and a value whose UTF-8 is not ASCII.
const std::vector<std::pair<std::string, std::string>> redisson_fields{
    {"", "t6rZwibGo2uy1OSmNVe8pg"},
    {"a", "qwvAS12pR0CgRitaypEjUw"},
    {"ab", "qIx8Ray65QDI9s9SyboNig"},
    {"abc", "BhA5LsZVetaLy1jDRVlHJg"},
    {"abcd", "haHCdewnDAU7SZwj3LgylA"},
    {"abcde", "hfWj1wpMNXSGnlmtGr6oUA"},
    {"Jack_001", "7pNoDdizVy2xY792MaFv+w"},
    {"Mary_002", "kIX2DFOX4IWct7G7K6tV9A"},
    {"0123456789abcdef", "5qUj4dpRCsa+LSow2X8w7w"},
    {"0123456789abcdefg", "sGQ3By/7MZpk/9JqMIOg+g"},
    {"0123456789abcdefghij", "9ctrlcYQxQB7kHIMKQJu9A"},
    {"0123456789abcdef0123456789abcde", "zsxmZXDIjwSeXS/uD03XEQ"},
    {"0123456789abcdef0123456789abcdef", "08hr0B8iaf3PoSsWAS8sWA"},
    {"0123456789abcdef0123456789abcdef!", "RVwNK2RMTLLmozj/r+2k+Q"},
    {std::string(48, 'x'), "vNrG6DRuor3xo4BR1sytnw"},
    {std::string(63, 'y'), "IxPvsdkvAMFVTYDz4HWcwA"},
    {std::string(64, 'z'), "K4sy4tB+jPksLU5ApicrWQ"},
    {"order:" + std::string(94, '9'), "W+KHHnMxcnM+xRjsPrH6IA"},
    {"\xd0\xba\xd0\xbb\xd1\x8e\xd1\x87-\xe5\x80\xa4", "37Uz4NMJc7r8yIkuGktvJA"},  // "ключ-値"
};

TEST(GroupLockField, IsRedissonsHashOfTheBytes) {
    for (const auto& [value, field] : redisson_fields) {
        EXPECT_EQ(detail::value_field(value), field) << "value of " << value.size() << " bytes";
        EXPECT_EQ(MultiValueLock::field_of(value), field);
    }
}

TEST(GroupLockField, ASetIsSortedAndCountsAValueOnce) {
    EXPECT_EQ(detail::value_fields({"Mary_002", "Jack_001", "Mary_002"}),
              (std::vector<std::string>{"7pNoDdizVy2xY792MaFv+w", "kIX2DFOX4IWct7G7K6tV9A"}));
}

}  // namespace
}  // namespace holdfast::testing
