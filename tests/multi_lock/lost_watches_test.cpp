// A MultiLock's lease-lost token per owner (multi_lock/lost_watches.hpp): it
// fires when any member's own token does, and is kept, replaced or dropped as
// the members' tokens go on or change. No server.
#include "multi_lock/lost_watches.hpp"

#include <gtest/gtest.h>

#include <stop_token>
#include <vector>

namespace holdfast::detail {
namespace {

TEST(LostWatches, FiresWhenAnyMemberIsLost) {
    std::stop_source a, b;
    LostWatches watches;
    const std::stop_token group = watches.token("owner", {a.get_token(), b.get_token()});
    ASSERT_TRUE(group.stop_possible());
    EXPECT_FALSE(group.stop_requested());
    b.request_stop();
    EXPECT_TRUE(group.stop_requested());
}

// A member held without the watchdog has no stop state: nor has the group.
TEST(LostWatches, NoTokenWhenAMemberHasNone) {
    std::stop_source a;
    LostWatches watches;
    EXPECT_FALSE(watches.token("owner", {a.get_token(), std::stop_token{}}).stop_possible());
}

TEST(LostWatches, TheSameMembersGetTheSameTokenAndOtherOwnersTheirOwn) {
    std::stop_source a, b;
    LostWatches watches;
    const auto first = watches.token("owner", {a.get_token(), b.get_token()});
    EXPECT_EQ(watches.token("owner", {a.get_token(), b.get_token()}), first);
    const auto other = watches.token("other", {a.get_token(), b.get_token()});
    EXPECT_NE(other, first);
    a.request_stop();
    EXPECT_TRUE(first.stop_requested());
    EXPECT_TRUE(other.stop_requested());
}

// Members re-taken (new leases, new tokens) get a fresh watch: the old lost state is not theirs.
TEST(LostWatches, NewMemberTokensGetAFreshWatch) {
    std::stop_source a, b, a2;
    LostWatches watches;
    const auto first = watches.token("owner", {a.get_token(), b.get_token()});
    const auto second = watches.token("owner", {a2.get_token(), b.get_token()});
    EXPECT_NE(second, first);
    a.request_stop();  // the old member: no longer watched
    EXPECT_FALSE(second.stop_requested());
    a2.request_stop();
    EXPECT_TRUE(second.stop_requested());
}

// Once lost, the owner's token stays lost (whatever the members now are) until forgotten.
TEST(LostWatches, ALostTokenStaysUntilForgotten) {
    std::stop_source a, b;
    LostWatches watches;
    const auto lost = watches.token("owner", {a.get_token()});
    a.request_stop();
    EXPECT_EQ(watches.token("owner", {b.get_token()}), lost);
    watches.forget("owner", {a.get_token()});  // the members it watches, but lost: forgotten
    const auto fresh = watches.token("owner", {b.get_token()});
    EXPECT_NE(fresh, lost);
    EXPECT_FALSE(fresh.stop_requested());
}

// An unlock with a reentrant hold still on (the same member tokens) keeps the
// watch; one whose members changed drops it.
TEST(LostWatches, ForgetKeepsAWatchWhoseMembersAreStillTheSame) {
    std::stop_source a, b;
    LostWatches watches;
    const auto first = watches.token("owner", {a.get_token()});
    watches.forget("owner", {a.get_token()});
    EXPECT_EQ(watches.token("owner", {a.get_token()}), first);
    watches.forget("owner", {});  // the last hold went: no member tokens now
    EXPECT_NE(watches.token("owner", {a.get_token()}), first);
}

}  // namespace
}  // namespace holdfast::detail
