// The permit-expirable semaphore's permit ids (semaphore/permits.hpp): 16
// bytes, handed out as 32 lowercase hex digits and read back in either case;
// an id that is no id, none at all or one given twice is refused naming the
// semaphore. No server.
#include "semaphore/permits.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace holdfast::detail {
namespace {

using namespace std::string_literals;

TEST(PermitHex, IsLowercaseHexOfEachByteInOrder) {
    EXPECT_EQ(permit_hex("\x00\x01\x7f\x80\xab\xff"s), "00017f80abff");
    EXPECT_EQ(permit_hex(""), "");
}

TEST(NewPermit, IsSixteenBytesAndNeverTheSameTwice) {
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) {
        const std::string permit = new_permit();
        ASSERT_EQ(permit.size(), 16u);
        EXPECT_TRUE(seen.insert(permit).second) << permit_hex(permit);
    }
}

TEST(PermitBytes, ReadsBackWhatPermitHexGaveInEitherCase) {
    const std::string bytes = "\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff"s;
    const std::string other = new_permit();
    EXPECT_EQ(permit_bytes("semaphore", "pool", {permit_hex(bytes), permit_hex(other)}),
              (std::vector<std::string>{bytes, other}));
    EXPECT_EQ(permit_bytes("semaphore", "pool", {"00112233445566778899AABBCCDDEEFF"}), (std::vector<std::string>{bytes}));
}

// The message every refusal must carry: the semaphore and what is wrong.
void expect_refused(const std::vector<std::string>& ids, const std::string& why) {
    try {
        permit_bytes("permit-expirable semaphore", "pool", ids);
        ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        EXPECT_TRUE(what.starts_with("holdfast: permit-expirable semaphore 'pool': ")) << what;
        EXPECT_NE(what.find(why), std::string::npos) << what;
    }
}

TEST(PermitBytes, RefusesNoIds) { expect_refused({}, "no permit ids given"); }

TEST(PermitBytes, RefusesAnIdOfAnotherLength) {
    expect_refused({"0011"}, "permit_id must be 32 hex digits, as acquire() returns, got '0011'");
    expect_refused({std::string(34, 'a')}, "got '" + std::string(34, 'a') + "'");
    expect_refused({""}, "got ''");
}

TEST(PermitBytes, RefusesAnIdWithADigitThatIsNotHex) {
    expect_refused({"0011223344556677889900aabbccddeg"}, "got '0011223344556677889900aabbccddeg'");
    expect_refused({"g011223344556677889900aabbccddee"}, "must be 32 hex digits");
    expect_refused({"00112233445566778899-0aabbccddee"}, "must be 32 hex digits");
}

// One permit named twice, even in two cases: released once, it would be counted twice.
TEST(PermitBytes, RefusesAnIdGivenTwice) {
    expect_refused({"00112233445566778899aabbccddeeff", "ffeeddccbbaa99887766554433221100",
                    "00112233445566778899AABBCCDDEEFF"},
                   "permit 00112233445566778899aabbccddeeff is given twice");
}

}  // namespace
}  // namespace holdfast::detail
