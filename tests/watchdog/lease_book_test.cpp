// The watchdog's bookkeeping on its own: no server, no clock, no timer.
#include "watchdog/lease_book.hpp"

#include <gtest/gtest.h>

#include "watchdog/lease.hpp"

namespace holdfast::detail {
namespace {

using namespace std::chrono_literals;
using Clock = LeaseBook::Clock;

const Clock::time_point t0{std::chrono::hours(1)};
const Script renew_a{"a", "", ""};
const Script renew_b{"b", "", ""};
constexpr auto lease = 30s;

std::size_t one_shard(const std::string&) { return 0; }

Reply replies(std::initializer_list<long long> each) {
    Reply reply;
    reply.type = Reply::Type::array;
    for (long long i : each) {
        Reply r;
        r.type = Reply::Type::integer;
        r.integer = i;
        reply.elements.push_back(r);
    }
    return reply;
}

TEST(LeaseBook, ArmsForTheEarlierOfTheRenewalAndTheDeadline) {
    LeaseBook book(lease, 100);
    EXPECT_EQ(book.track(&renew_a, "lock", "a", "o", t0, lease, t0), t0 + lease / 3);
    EXPECT_TRUE(book.renews("a", "o"));
    // Armed already for earlier: nothing to re-arm.
    EXPECT_EQ(book.track(&renew_a, "lock", "b", "o", t0, lease, t0 + 1s), std::nullopt);
    // An explicit lease shorter than the renewal interval: watched, not renewed.
    const auto deadline = t0 + 5s - lease_margin(5s);
    EXPECT_EQ(book.track(nullptr, "lock", "c", "o", t0, 5s, t0), deadline);
    EXPECT_FALSE(book.renews("c", "o"));
    EXPECT_EQ(book.next_wake(), deadline);
    EXPECT_EQ(book.tracked(), 3u);
}

TEST(LeaseBook, ADeadlinePassedUnrenewedLosesTheHoldUntilUntracked) {
    LeaseBook book(lease, 100);
    book.track(nullptr, "lock", "a", "o", t0, 5s, t0);
    const auto deadline = t0 + 5s - lease_margin(5s);
    const auto token = book.lease_lost("a", "o");
    EXPECT_TRUE(book.expire(deadline - 1ms).empty());
    auto lost = book.expire(deadline);
    ASSERT_EQ(lost.size(), 1u);
    EXPECT_EQ(lost[0].id, (LeaseBook::Id{"a", "o"}));
    EXPECT_EQ(lost[0].kind, "lock");
    lost[0].source.request_stop();  // the watchdog does, outside its mutex
    EXPECT_TRUE(token.stop_requested());
    EXPECT_EQ(book.lost_for("a", "o", deadline + 7ms), 7ms);
    EXPECT_TRUE(book.expire(deadline + 1s).empty());  // told once
    EXPECT_EQ(book.next_wake(), std::nullopt);        // nothing left to watch
    EXPECT_EQ(book.tracked(), 1u);
    // Taken again: a fresh hold, with a fresh token.
    book.track(&renew_a, "lock", "a", "o", t0 + 10s, lease, t0 + 10s);
    EXPECT_TRUE(book.renews("a", "o"));
    EXPECT_FALSE(book.lease_lost("a", "o").stop_requested());
    EXPECT_EQ(book.lost_for("a", "o", t0 + 10s), std::nullopt);
    book.untrack("a", "o");
    EXPECT_EQ(book.tracked(), 0u);
}

TEST(LeaseBook, AnExtendedLeaseIsLostAtItsNewDeadlineOnly) {
    LeaseBook book(lease, 100);
    book.track(nullptr, "lock", "a", "o", t0, 5s, t0);
    const auto first = t0 + 5s - lease_margin(5s);
    book.extend("a", "o", t0 + 2s, 20s);
    const auto extended = t0 + 2s + 20s - lease_margin(20s);
    // The timer armed for the first deadline finds nothing lost then.
    EXPECT_TRUE(book.expire(first).empty());
    EXPECT_EQ(book.next_wake(), extended);
    EXPECT_TRUE(book.expire(extended - 1ms).empty());
    EXPECT_EQ(book.expire(extended).size(), 1u);
    // Nothing for a hold not tracked, or lost already.
    book.extend("b", "o", t0, 20s);
    EXPECT_EQ(book.tracked(), 1u);
    book.extend("a", "o", extended, 20s);
    EXPECT_EQ(book.lost_for("a", "o", extended + 5ms), 5ms);
}

TEST(LeaseBook, RenewalsAreBatchedByScriptAndShard) {
    LeaseBook book(lease, 2);
    for (const char* key : {"a1", "a2", "a3", "x1"}) book.track(&renew_a, "lock", key, "o", t0, lease, t0);
    book.track(&renew_b, "read lock", "b1", "o", t0, lease, t0);
    book.track(nullptr, "lock", "explicit", "o", t0, lease, t0);
    EXPECT_FALSE(book.renewal_due(t0 + lease / 3 - 1ms));
    EXPECT_TRUE(book.renewal_due(t0 + lease / 3));
    const auto batches = book.renewals(t0 + 10s, [](const std::string& key) { return key[0] == 'x' ? 1u : 0u; });
    ASSERT_EQ(batches.size(), 4u);  // a/0: 2 + 1, a/1: 1, b: 1
    std::size_t holds = 0;
    for (const auto& batch : batches) {
        EXPECT_LE(batch.holds.size(), 2u);
        holds += batch.holds.size();
        for (const auto& sent : batch.holds) {
            EXPECT_EQ(batch.renew, sent.id.first[0] == 'b' ? &renew_b : &renew_a);
            EXPECT_NE(sent.id.first, "explicit");
        }
    }
    EXPECT_EQ(holds, 5u);
    EXPECT_FALSE(book.renewal_due(t0 + 10s));
    EXPECT_TRUE(book.renewal_due(t0 + 20s));
}

TEST(LeaseBook, ARenewalMovesTheDeadlineAndAGoneHoldIsLost) {
    LeaseBook book(lease, 100);
    book.track(&renew_a, "lock", "kept", "o", t0, lease, t0);
    book.track(&renew_a, "fair lock", "gone", "o", t0, lease, t0);
    const auto batches = book.renewals(t0 + 10s, one_shard);
    ASSERT_EQ(batches.size(), 1u);
    const auto& holds = batches[0].holds;
    ASSERT_EQ(holds[0].id.first, "gone");  // by key
    const auto token = book.lease_lost("gone", "o");
    auto result = book.renewed(holds, replies({0, 1}), t0 + 10s);
    EXPECT_EQ(result.kinds, (std::vector<std::string_view>{"lock"}));
    ASSERT_EQ(result.lost.size(), 1u);
    EXPECT_EQ(result.lost[0].kind, "fair lock");
    result.lost[0].source.request_stop();
    EXPECT_TRUE(token.stop_requested());
    EXPECT_EQ(book.tracked(), 1u);  // the gone hold forgotten
    // Trusted until a lease after the renewal was sent, less the margin.
    EXPECT_TRUE(book.expire(t0 + 10s + lease - lease_margin(lease) - 1ms).empty());
    EXPECT_EQ(book.expire(t0 + 10s + lease - lease_margin(lease)).size(), 1u);
}

TEST(LeaseBook, AReplyForAHoldReleasedAndTakenAgainIsIgnored) {
    LeaseBook book(lease, 100);
    book.track(&renew_a, "lock", "a", "o", t0, lease, t0);
    const auto batches = book.renewals(t0 + 10s, one_shard);
    book.untrack("a", "o");
    EXPECT_EQ(book.kinds_of(batches[0].holds), (std::vector<std::string_view>{""}));
    book.track(&renew_a, "lock", "a", "o", t0 + 11s, lease, t0 + 11s);
    const auto result = book.renewed(batches[0].holds, replies({0}), t0 + 10s);
    EXPECT_TRUE(result.kinds.empty());
    EXPECT_TRUE(result.lost.empty());
    EXPECT_TRUE(book.renews("a", "o"));
    EXPECT_EQ(book.kinds_of(batches[0].holds), (std::vector<std::string_view>{"lock"}));
}

TEST(LeaseBook, RenewalStopsWhenNothingRenews) {
    LeaseBook book(lease, 100);
    book.track(&renew_a, "lock", "a", "o", t0, lease, t0);
    EXPECT_EQ(book.next_wake(), t0 + lease / 3);
    book.untrack("a", "o");
    EXPECT_EQ(book.next_wake(), std::nullopt);
    EXPECT_FALSE(book.renewal_due(t0 + 1h));
    // The next hold arms again from its own time.
    EXPECT_EQ(book.track(&renew_a, "lock", "b", "o", t0 + 1h, lease, t0 + 1h), t0 + 1h + lease / 3);
}

TEST(LeaseBook, ATokenAskedForOnceTheHoldIsLostIsStoppedAlready) {
    LeaseBook book(lease, 100);
    book.track(nullptr, "lock", "a", "o", t0, 5s, t0);
    auto lost = book.expire(t0 + 5s);
    ASSERT_EQ(lost.size(), 1u);
    lost[0].source.request_stop();  // no token asked for yet: nothing to stop
    EXPECT_TRUE(book.lease_lost("a", "o").stop_requested());
    EXPECT_FALSE(book.lease_lost("b", "o").stop_possible());  // not tracked: no stop state
}

TEST(LeaseBook, TheLedgerAndTheWatchdogKeepOneRecordEachPartEndingOnItsOwn) {
    LeaseBook book(lease, 100);
    book.taken("a", "o", t0);
    book.taken("a", "o", t0 + 1s);
    book.track(&renew_a, "lock", "a", "o", t0, lease, t0);
    EXPECT_EQ(book.known("a", "o"), 2);
    EXPECT_EQ(book.known("a", "other"), 0);
    EXPECT_EQ(book.counted(), 1u);
    EXPECT_EQ(book.tracked(), 1u);
    // The renewal ends; the ledger still counts both holds.
    book.untrack("a", "o");
    EXPECT_FALSE(book.renews("a", "o"));
    EXPECT_EQ(book.known("a", "o"), 2);
    EXPECT_EQ(book.given_back("a", "o", false, t0 + 3s), 3s);  // since the first hold
    EXPECT_EQ(book.known("a", "o"), 1);
    // Watched again, then the ledger forgets every hold: the watch goes on.
    book.track(&renew_a, "lock", "a", "o", t0 + 4s, lease, t0 + 4s);
    EXPECT_EQ(book.given_back("a", "o", true, t0 + 5s), 5s);
    EXPECT_EQ(book.known("a", "o"), 0);
    EXPECT_EQ(book.counted(), 0u);
    EXPECT_TRUE(book.renews("a", "o"));
    EXPECT_EQ(book.given_back("a", "o", false, t0 + 6s), std::nullopt);
    // A hold the server no longer has ends the watch only.
    book.taken("a", "o", t0 + 6s);
    const auto batches = book.renewals(t0 + 10s, one_shard);
    ASSERT_EQ(batches.size(), 1u);
    EXPECT_EQ(book.renewed(batches[0].holds, replies({0}), t0 + 10s).lost.size(), 1u);
    EXPECT_EQ(book.tracked(), 0u);
    EXPECT_EQ(book.known("a", "o"), 1);
    book.given_back("a", "o", false, t0 + 11s);
    EXPECT_EQ(book.counted(), 0u);
    EXPECT_FALSE(book.renews("a", "o"));
}

// A thread takes the same locks again and again: its record is kept while it
// holds nothing (no allocation for the next hold), but only for the last
// owners to empty, so a client of many owners does not keep them all.
TEST(LeaseBook, OwnersThatHoldNothingAreKeptOnlyForTheLastFew) {
    LeaseBook book(lease, 100);
    for (int i = 0; i < 1000; ++i) {
        const std::string owner = "owner-" + std::to_string(i);
        book.taken("a", owner, t0);
        book.given_back("a", owner, false, t0 + 1s);
    }
    EXPECT_EQ(book.owner_records(), LeaseBook::kept_empty_max);
    EXPECT_EQ(book.counted(), 0u);
    // A kept owner starts again from nothing; the others are gone, not stale.
    book.taken("b", "owner-999", t0 + 2s);
    EXPECT_EQ(book.known("b", "owner-999"), 1);
    EXPECT_EQ(book.known("a", "owner-999"), 0);
    EXPECT_EQ(book.known("a", "owner-0"), 0);
    // One that holds something when its turn to go comes stays, holds and all.
    for (int i = 0; i < 1000; ++i) {
        const std::string owner = "later-" + std::to_string(i);
        book.taken("a", owner, t0);
        book.given_back("a", owner, false, t0 + 1s);
    }
    EXPECT_EQ(book.known("b", "owner-999"), 1);
    EXPECT_EQ(book.owner_records(), LeaseBook::kept_empty_max + 1);
    book.given_back("b", "owner-999", false, t0 + 3s);
    EXPECT_EQ(book.counted(), 0u);
    EXPECT_EQ(book.owner_records(), LeaseBook::kept_empty_max);
}

}  // namespace
}  // namespace holdfast::detail
