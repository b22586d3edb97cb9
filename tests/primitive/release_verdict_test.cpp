// The release verdict as a table: every reply, with and without holds the
// caller believes in, with and without a local loss. No server.
#include "primitive/release_verdict.hpp"

#include <gtest/gtest.h>

#include <tuple>

namespace holdfast::detail {
namespace {

using R = ReleaseReply;
using V = ReleaseVerdict;
using L = ReleaseDecision::Ledger;

struct Row {
    ReleaseFacts facts;
    V verdict;
    L ledger;
    bool end_renewal, tell_lost, give_back_rest, count_hold_time;
};

std::string describe(const ReleaseFacts& f) {
    static const char* replies[] = {"released", "still_held", "not_held", "refused", "no_reply"};
    return std::string("reply ") + replies[static_cast<int>(f.reply)] + ", known " + std::to_string(f.known) +
           (f.lost_locally ? ", lost locally" : "") + (f.unconfirmed ? ", unconfirmed" : "");
}

// clang-format off
const Row table[] = {
    //  reply            known lost    verdict        ledger        end    tell   rest   time
    {{R::released,       1, false}, V::released, L::forget,    true,  false, false, true},
    {{R::released,       1, true},  V::lost,     L::forget,    true,  false, false, true},
    // the server counted fewer holds than the caller believes in: the others are gone
    {{R::released,       3, false}, V::released, L::forget,    true,  true,  false, true},
    // a lock already gone answers 1 (the fair lock): never ours
    {{R::released,       0, false}, V::not_held, L::forget,    true,  false, false, false},
    // a partial unlock keeps the rest held and renewed
    {{R::still_held,     2, false}, V::released, L::one_fewer, false, false, false, false},
    {{R::still_held,     2, true},  V::lost,     L::one_fewer, false, false, false, false},
    // the caller's last hold, but the server counts more: those acquires' replies were lost
    {{R::still_held,     1, false}, V::released, L::forget,    true,  false, true,  true},
    {{R::still_held,     1, true},  V::lost,     L::forget,    true,  false, true,  true},
    {{R::still_held,     0, false}, V::not_held, L::forget,    true,  false, true,  false},
    {{R::not_held,       1, false}, V::not_held, L::forget,    true,  true,  false, false},
    {{R::not_held,       2, true},  V::lost,     L::forget,    true,  true,  false, false},
    {{R::not_held,       0, false}, V::not_held, L::forget,    true,  false, false, false},
    // a refused or unanswered release ends the renewal: the lease ends the hold
    {{R::refused,        1, false}, V::refused,  L::one_fewer, true,  true,  false, false},
    {{R::refused,        2, false}, V::refused,  L::one_fewer, true,  true,  false, false},
    {{R::refused,        0, false}, V::refused,  L::one_fewer, true,  false, false, false},
    {{R::no_reply,       1, false}, V::unknown,  L::one_fewer, true,  true,  false, false},
    {{R::no_reply,       1, true},  V::unknown,  L::one_fewer, true,  true,  false, false},
    {{R::no_reply,       0, false}, V::unknown,  L::one_fewer, true,  false, false, false},
    // released on a master no replica confirmed: said so (and sent again by the pipeline)
    {{R::released,       1, false, true}, V::unconfirmed, L::forget, true, false, false, true},
    // ...but a hold lost locally is lost whatever the replicas say
    {{R::released,       1, true,  true}, V::lost,        L::forget, true, false, false, true},
    // a partial unlock keeps the hold, replicas or not
    {{R::still_held,     2, false, true}, V::released,    L::one_fewer, false, false, false, false},
};
// clang-format on

TEST(ReleaseVerdict, EveryRowOfTheTable) {
    for (const Row& row : table) {
        SCOPED_TRACE(describe(row.facts));
        const ReleaseDecision d = judge(row.facts);
        EXPECT_EQ(to_string(d.verdict), to_string(row.verdict));
        EXPECT_EQ(d.ledger, row.ledger);
        EXPECT_EQ(d.end_renewal, row.end_renewal);
        EXPECT_EQ(d.tell_lost, row.tell_lost);
        EXPECT_EQ(d.give_back_rest, row.give_back_rest);
        EXPECT_EQ(d.count_hold_time, row.count_hold_time);
    }
}

// Whatever the server said, a release that was tried never leaves the hold
// renewed unless the server says the owner still holds it and the caller
// believes in holds beyond this one.
TEST(ReleaseVerdict, OnlyAPartialUnlockKeepsTheRenewal) {
    for (R reply : {R::released, R::still_held, R::not_held, R::refused, R::no_reply})
        for (std::int64_t known : {0, 1, 2, 5})
            for (bool lost : {false, true}) {
                const ReleaseFacts facts{reply, known, lost, lost};
                SCOPED_TRACE(describe(facts));
                EXPECT_EQ(judge(facts).end_renewal, !(reply == R::still_held && known > 1));
            }
}

// A caller that believed in a hold hears of it whenever the release fails.
TEST(ReleaseVerdict, AFailedReleaseOfABelievedHoldTellsTheHolder) {
    for (R reply : {R::not_held, R::refused, R::no_reply}) {
        SCOPED_TRACE(describe({reply, 1, false}));
        const ReleaseDecision d = judge({reply, 1, false});
        EXPECT_NE(d.verdict, V::released);
        EXPECT_TRUE(d.tell_lost);
    }
}

}  // namespace
}  // namespace holdfast::detail
