// The acquire machine on its own: events in, actions out, no server, no clock.
#include "primitive/acquire_machine.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

namespace holdfast::detail {
namespace {

using namespace std::chrono_literals;
using Machine = AcquireMachine;
using Kind = Machine::Action::Kind;
using State = Machine::State;
using K = std::vector<Kind>;

const Machine::Clock::time_point t0{std::chrono::hours(1)};

K kinds(const Machine::Actions& actions) {
    K out;
    for (const auto& a : actions) out.push_back(a.kind);
    return out;
}

detail::Failure error(const char* what) { return {errc::connection_lost, what}; }

std::string what(const detail::Failure& e) { return e.message(); }

Machine::Options gives_up_and_back() {
    Machine::Options o;
    o.gives_up = true;
    o.gives_back = true;
    return o;
}

// A waiter refused once and then confirmed subscribed: its attempt in flight.
void to_subscribed_attempt(Machine& m) {
    m.start();
    m.attempt_replied(Attempt::refused(500), t0);
    m.subscribed();
    ASSERT_EQ(m.state(), State::attempting);
}

// ... and that attempt refused: asleep on the channel.
void to_sleeping(Machine& m) {
    to_subscribed_attempt(m);
    m.attempt_replied(Attempt::refused(500), t0);
    ASSERT_EQ(m.state(), State::sleeping);
}

TEST(AcquireMachine, ImmediateAcquireCompletesWithTheToken) {
    Machine m({});
    EXPECT_EQ(kinds(m.start()), (K{Kind::send_attempt}));
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::acquired(7), t0)), (K{Kind::complete}));
    EXPECT_EQ(m.state(), State::done);
    EXPECT_TRUE(m.outcome().acquired);
    EXPECT_EQ(m.outcome().token, 7);
    EXPECT_FALSE(m.outcome().error);
}

TEST(AcquireMachine, RefusedSubscribesThenRetriesOnceSubscribed) {
    Machine m({});
    m.start();
    // The timer first, the subscription last: an active channel confirms at once.
    const auto first = m.attempt_replied(Attempt::refused(500), t0);
    EXPECT_EQ(kinds(first), (K{Kind::arm_timer, Kind::subscribe}));
    EXPECT_EQ(first[0].at, t0 + 500ms);
    EXPECT_EQ(m.state(), State::sleeping);
    // The release may have come before the subscription: try again.
    EXPECT_EQ(kinds(m.subscribed()), (K{Kind::send_attempt}));
    // Refused again: sleep, without subscribing twice.
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::refused(400), t0 + 10ms)), (K{Kind::arm_timer}));
    EXPECT_EQ(m.timer_at(), t0 + 410ms);
    const auto woken = m.woken();
    EXPECT_TRUE(woken.took_wake);
    EXPECT_EQ(kinds(woken), (K{Kind::send_attempt}));
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::acquired(), t0 + 20ms)), (K{Kind::unsubscribe, Kind::complete}));
    EXPECT_TRUE(m.outcome().acquired);
}

TEST(AcquireMachine, SubscriptionConfirmedDuringAnAttemptRetriesAtOnce) {
    Machine m({});
    to_subscribed_attempt(m);
    EXPECT_TRUE(kinds(m.subscribed()).empty());  // a reconnect: messages may have been missed
    EXPECT_EQ(m.state(), State::attempting_retry);
    EXPECT_FALSE(m.woken().took_wake);  // due to retry anyway: the next waiter may have it
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::refused(500), t0)), (K{Kind::send_attempt}));
}

TEST(AcquireMachine, WakeUpDuringAnAttemptIsNotLost) {
    Machine m({});
    to_subscribed_attempt(m);
    // The attempt may have run before the release the wake-up announces.
    const auto woken = m.woken();
    EXPECT_TRUE(woken.took_wake);
    EXPECT_TRUE(kinds(woken).empty());
    EXPECT_EQ(m.state(), State::attempting_woken);
    EXPECT_FALSE(m.woken().took_wake);  // one is enough: a second goes to the next waiter
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::refused(500), t0)), (K{Kind::send_attempt}));
    EXPECT_EQ(m.state(), State::attempting);
}

TEST(AcquireMachine, WakeUpTakenThenGivenUpGoesToTheNextWaiter) {
    Machine::Options o;
    o.deadline = t0 + 1s;
    o.gives_up = true;
    Machine m(o);
    to_subscribed_attempt(m);
    EXPECT_TRUE(m.woken().took_wake);
    // Refused at the deadline: it leaves, and the wake-up it cannot use goes on.
    const auto end = m.attempt_replied(Attempt::refused(500), t0 + 1s);
    EXPECT_EQ(kinds(end), (K{Kind::unsubscribe, Kind::pass_on, Kind::give_up}));
    EXPECT_EQ(end[1].count, 1);
    EXPECT_FALSE(end[1].after_self);
    EXPECT_EQ(m.state(), State::leaving);
    EXPECT_EQ(kinds(m.left(t0)), (K{Kind::complete}));
    EXPECT_FALSE(m.outcome().acquired);
    EXPECT_FALSE(m.outcome().error);
}

TEST(AcquireMachine, WakeUpTakenThenFailedGoesToTheNextWaiter) {
    Machine m({});
    to_subscribed_attempt(m);
    m.woken();
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::failed(error("boom")), t0)),
              (K{Kind::unsubscribe, Kind::pass_on, Kind::complete}));
    EXPECT_EQ(what(m.outcome().error), "boom");
}

TEST(AcquireMachine, WakeUpTakenAndUsedIsNotHandedOn) {
    Machine m({});
    to_subscribed_attempt(m);
    m.woken();
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::acquired(), t0)), (K{Kind::unsubscribe, Kind::complete}));
}

TEST(AcquireMachine, PassOnRefusalHandsTheWakeUpToLaterWaitersOnly) {
    Machine m({});
    to_sleeping(m);
    m.woken();
    const auto refused = m.attempt_replied(Attempt::refused(-1, /*pass_on=*/true), t0);
    EXPECT_EQ(kinds(refused), (K{Kind::pass_on, Kind::arm_timer}));
    EXPECT_EQ(refused[0].count, 1);
    EXPECT_TRUE(refused[0].after_self);
    EXPECT_EQ(m.timer_at(), Machine::Clock::time_point::max());  // no TTL, no deadline
}

TEST(AcquireMachine, PassOnRefusalNotLedByAWakeUpHandsNothingOn) {
    Machine m({});
    to_sleeping(m);
    EXPECT_EQ(kinds(m.timer_fired(t0 + 500ms)), (K{Kind::send_attempt}));
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::refused(-1, true), t0)), (K{Kind::arm_timer}));
}

TEST(AcquireMachine, PassOnRefusalAtTheDeadlineHandsItToEveryOtherWaiter) {
    Machine::Options o;
    o.deadline = t0 + 1s;
    Machine m(o);
    to_sleeping(m);
    m.woken();
    const auto end = m.attempt_replied(Attempt::refused(-1, true), t0 + 1s);
    EXPECT_EQ(kinds(end), (K{Kind::unsubscribe, Kind::pass_on, Kind::complete}));
    EXPECT_FALSE(end[1].after_self);
}

TEST(AcquireMachine, SleepsUntilTheHoldersTtl) {
    Machine m({});
    to_sleeping(m);
    EXPECT_EQ(m.timer_at(), t0 + 500ms);
    const auto early = m.timer_fired(t0 + 499ms);  // from an earlier sleep: waits again
    EXPECT_EQ(kinds(early), (K{Kind::arm_timer}));
    EXPECT_EQ(early[0].at, t0 + 500ms);
    EXPECT_EQ(kinds(m.timer_fired(t0 + 500ms)), (K{Kind::send_attempt}));
    EXPECT_TRUE(kinds(m.timer_fired(t0 + 600ms)).empty());  // not sleeping
    m.attempt_replied(Attempt::refused(-2), t0 + 600ms);   // released between checks
    EXPECT_EQ(m.timer_at(), t0 + 600ms);
    m.timer_fired(t0 + 600ms);
    m.attempt_replied(Attempt::refused(std::numeric_limits<long long>::max()), t0);  // capped
    EXPECT_EQ(m.timer_at(), t0 + 24h);
}

// A release named another waiter: what this one slept for is over, and it
// checks once, later, in case the one named never comes (targeted wake-ups).
TEST(AcquireMachine, AHandoffElsewhereMovesTheSleepToOneCheckLater) {
    Machine::Options o;
    o.check_after_handoff = 1s;
    Machine m(o);
    to_sleeping(m);
    const auto moved = m.named_elsewhere(t0 + 100ms);
    EXPECT_EQ(kinds(moved), (K{Kind::arm_timer}));
    EXPECT_EQ(moved[0].at, t0 + 1100ms);
    EXPECT_EQ(kinds(m.timer_fired(t0 + 500ms)), (K{Kind::arm_timer}));  // the old wait: again
    EXPECT_EQ(kinds(m.timer_fired(t0 + 1100ms)), (K{Kind::send_attempt}));
}

// Later handoffs do not push the check back: a waiter whose listing was lost
// (the server refused it, a failover dropped it) must still try.
TEST(AcquireMachine, LaterHandoffsDoNotPushTheCheckBack) {
    Machine::Options o;
    o.check_after_handoff = 1s;
    Machine m(o);
    to_sleeping(m);
    m.named_elsewhere(t0 + 100ms);
    EXPECT_TRUE(kinds(m.named_elsewhere(t0 + 900ms)).empty());
    EXPECT_EQ(m.timer_at(), t0 + 1100ms);
    EXPECT_EQ(kinds(m.timer_fired(t0 + 1100ms)), (K{Kind::send_attempt}));
    // Refused again, asleep on the new holder's TTL: the next handoff arms a new check.
    m.attempt_replied(Attempt::refused(20000), t0 + 1200ms);
    EXPECT_EQ(m.named_elsewhere(t0 + 1300ms)[0].at, t0 + 2300ms);
}

// Told of a handoff while its attempt is in flight: the refusal's TTL may be
// the gone holder's, so it sleeps no longer than the check.
TEST(AcquireMachine, AHandoffDuringAnAttemptBoundsTheSleepThatFollows) {
    Machine::Options o;
    o.check_after_handoff = 1s;
    Machine m(o);
    to_sleeping(m);
    m.timer_fired(t0 + 500ms);  // attempting
    EXPECT_TRUE(kinds(m.named_elsewhere(t0 + 510ms)).empty());
    m.attempt_replied(Attempt::refused(25000), t0 + 520ms);
    EXPECT_EQ(m.timer_at(), t0 + 1520ms);
}

TEST(AcquireMachine, AHandoffElsewhereNeverMovesTheSleepPastTheDeadline) {
    Machine::Options o;
    o.check_after_handoff = 1s;
    o.deadline = t0 + 700ms;
    Machine m(o);
    to_sleeping(m);
    EXPECT_EQ(m.named_elsewhere(t0 + 100ms)[0].at, t0 + 700ms);
}

// Without a waiter id (not listed), a handoff elsewhere changes nothing.
TEST(AcquireMachine, AnUnlistedWaiterSleepsOnThroughAHandoffElsewhere) {
    Machine m({});
    to_sleeping(m);
    EXPECT_TRUE(kinds(m.named_elsewhere(t0 + 100ms)).empty());
    EXPECT_EQ(m.timer_at(), t0 + 500ms);
}

TEST(AcquireMachine, DeadlineBoundsTheSleepAndEndsTheWait) {
    Machine::Options o;
    o.deadline = t0 + 200ms;
    Machine m(o);
    to_sleeping(m);
    EXPECT_EQ(m.timer_at(), t0 + 200ms);
    EXPECT_EQ(kinds(m.timer_fired(t0 + 200ms)), (K{Kind::unsubscribe, Kind::complete}));
    EXPECT_FALSE(m.outcome().acquired);
    EXPECT_FALSE(m.outcome().error);
}

TEST(AcquireMachine, DeadlinePastMeansOneAttempt) {
    Machine::Options o;
    o.deadline = t0;
    Machine m(o);
    EXPECT_EQ(kinds(m.start()), (K{Kind::send_attempt}));
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::refused(500), t0)), (K{Kind::complete}));
}

TEST(AcquireMachine, BackoffDoublesWithJitterAndNeverSubscribes) {
    Machine::Options o;
    o.backoff = Backoff{2ms, 8ms};
    Machine m(o);
    m.start();
    const long long bounds[][2] = {{1, 2}, {2, 4}, {4, 8}, {4, 8}};
    for (const auto& [low, high] : bounds) {
        EXPECT_EQ(kinds(m.attempt_replied(Attempt::refused(-1), t0)), (K{Kind::arm_timer}));
        EXPECT_GE(m.timer_at(), t0 + std::chrono::milliseconds(low));
        EXPECT_LE(m.timer_at(), t0 + std::chrono::milliseconds(high));
        EXPECT_EQ(kinds(m.timer_fired(m.timer_at())), (K{Kind::send_attempt}));
    }
    // Never past the holder's TTL; a wake-up is no business of a spinner's.
    m.attempt_replied(Attempt::refused(0), t0);
    EXPECT_EQ(m.timer_at(), t0);
    EXPECT_FALSE(m.woken().took_wake);
}

TEST(AcquireMachine, CancelBeforeTheFirstReplyEndsAtThatReply) {
    Machine m(gives_up_and_back());
    m.start();
    EXPECT_TRUE(kinds(m.cancel_requested()).empty());
    EXPECT_EQ(m.state(), State::cancelling);
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::refused(500), t0)), (K{Kind::give_up}));
    EXPECT_EQ(kinds(m.left(t0)), (K{Kind::complete}));
    EXPECT_FALSE(m.outcome().acquired);
    EXPECT_FALSE(m.outcome().error);
}

TEST(AcquireMachine, CancelBeforeTheFirstReplyThatAcquiresGivesItBack) {
    Machine m(gives_up_and_back());
    m.start();
    m.cancel_requested();
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::acquired(3), t0)), (K{Kind::give_back}));
    EXPECT_EQ(m.state(), State::leaving);
    EXPECT_TRUE(kinds(m.cancel_requested()).empty());
    EXPECT_TRUE(kinds(m.closing(error("closing"))).empty());
    EXPECT_EQ(kinds(m.left(t0)), (K{Kind::complete}));
    EXPECT_FALSE(m.outcome().acquired);
    EXPECT_FALSE(m.outcome().error);
}

// The caller is told while the step goes on (the driver's bound passed, or
// the server did not answer): complete once, and the step's own end later
// changes nothing.
TEST(AcquireMachine, AnOverdueStepCompletesAndItsLaterEndIsIgnored) {
    Machine m(gives_up_and_back());
    m.start();
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::failed(error("no reply")), t0)), (K{Kind::give_up}));
    EXPECT_EQ(kinds(m.overdue(t0)), (K{Kind::complete}));
    EXPECT_EQ(m.state(), State::done);
    EXPECT_EQ(what(m.outcome().error), "no reply");
    EXPECT_TRUE(kinds(m.left(t0)).empty());
    EXPECT_TRUE(kinds(m.overdue(t0)).empty());
}

TEST(AcquireMachine, AnOverdueGiveBackCompletesAsNotAcquired) {
    Machine m(gives_up_and_back());
    m.start();
    m.cancel_requested();
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::acquired(3), t0)), (K{Kind::give_back}));
    EXPECT_EQ(kinds(m.overdue(t0)), (K{Kind::complete}));
    EXPECT_FALSE(m.outcome().acquired);
    EXPECT_TRUE(kinds(m.left(t0)).empty());
}

TEST(AcquireMachine, CancelWithoutAGiveBackStepReportsWhatWasTaken) {
    Machine m({});
    m.start();
    m.cancel_requested();
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::acquired(3), t0)), (K{Kind::complete}));
    EXPECT_TRUE(m.outcome().acquired);
}

TEST(AcquireMachine, CancelWhileSleepingLeavesAtOnce) {
    Machine m(gives_up_and_back());
    to_sleeping(m);
    EXPECT_EQ(kinds(m.cancel_requested()), (K{Kind::unsubscribe, Kind::give_up}));
    EXPECT_TRUE(kinds(m.timer_fired(t0 + 1s)).empty());
    EXPECT_FALSE(m.woken().took_wake);
    EXPECT_EQ(kinds(m.left(t0)), (K{Kind::complete}));
    EXPECT_FALSE(m.outcome().acquired);
}

TEST(AcquireMachine, CancelDuringAnAttemptThatAcquiresGivesItBack) {
    Machine m(gives_up_and_back());
    to_subscribed_attempt(m);
    m.cancel_requested();
    EXPECT_FALSE(m.woken().took_wake);
    // The release it gives back wakes the next waiter: nothing to hand on.
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::acquired(), t0)), (K{Kind::unsubscribe, Kind::give_back}));
    EXPECT_EQ(kinds(m.left(t0)), (K{Kind::complete}));
    EXPECT_FALSE(m.outcome().acquired);
}

TEST(AcquireMachine, CancelWithAWakeUpTakenHandsItOnAtOnce) {
    Machine m({});
    to_subscribed_attempt(m);
    m.woken();
    const auto cancel = m.cancel_requested();
    EXPECT_EQ(kinds(cancel), (K{Kind::pass_on}));
    EXPECT_FALSE(cancel[0].after_self);
    EXPECT_FALSE(m.woken().took_wake);  // ... and declines it when it comes round
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::refused(500), t0)), (K{Kind::unsubscribe, Kind::complete}));
}

TEST(AcquireMachine, CancelDuringAnAttemptThatFailsIsNotAnError) {
    Machine m({});
    m.start();
    m.cancel_requested();
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::failed(error("boom")), t0)), (K{Kind::complete}));
    EXPECT_FALSE(m.outcome().error);
    EXPECT_FALSE(m.outcome().acquired);
}

TEST(AcquireMachine, CancelAfterCompletionDoesNothing) {
    Machine m(gives_up_and_back());
    m.start();
    m.attempt_replied(Attempt::acquired(), t0);
    EXPECT_TRUE(kinds(m.cancel_requested()).empty());
    EXPECT_TRUE(m.outcome().acquired);
    EXPECT_EQ(m.state(), State::done);
}

TEST(AcquireMachine, ChannelRefusedWhileSleepingFailsAtOnce) {
    Machine m(gives_up_and_back());
    to_sleeping(m);
    // The subscriber let its listeners go: nothing to unsubscribe.
    EXPECT_EQ(kinds(m.channel_refused(error("NOPERM"))), (K{Kind::give_up}));
    m.left(t0);
    EXPECT_EQ(what(m.outcome().error), "NOPERM");
}

TEST(AcquireMachine, ChannelRefusedDuringAnAttemptWaitsForIt) {
    Machine taken({});
    to_subscribed_attempt(taken);
    EXPECT_TRUE(kinds(taken.channel_refused(error("NOPERM"))).empty());
    EXPECT_EQ(taken.state(), State::failing);
    EXPECT_EQ(kinds(taken.attempt_replied(Attempt::acquired(), t0)), (K{Kind::complete}));
    EXPECT_TRUE(taken.outcome().acquired);

    Machine refused({});
    to_subscribed_attempt(refused);
    refused.channel_refused(error("NOPERM"));
    EXPECT_EQ(kinds(refused.attempt_replied(Attempt::refused(500), t0)), (K{Kind::complete}));
    EXPECT_EQ(what(refused.outcome().error), "NOPERM");
}

TEST(AcquireMachine, ClientClosingEndsTheWaitWithItsError) {
    Machine m(gives_up_and_back());
    to_sleeping(m);
    EXPECT_EQ(kinds(m.closing(error("closing"))), (K{Kind::unsubscribe, Kind::give_up}));
    EXPECT_EQ(kinds(m.left(t0)), (K{Kind::complete}));
    EXPECT_EQ(what(m.outcome().error), "closing");
}

TEST(AcquireMachine, ClientClosingDuringAnAttemptIgnoresItsReply) {
    Machine m({});
    to_subscribed_attempt(m);
    m.woken();
    EXPECT_EQ(kinds(m.closing(error("closing"))), (K{Kind::unsubscribe, Kind::pass_on, Kind::complete}));
    EXPECT_TRUE(kinds(m.attempt_replied(Attempt::acquired(), t0)).empty());
    EXPECT_FALSE(m.outcome().acquired);
}

TEST(AcquireMachine, ClientClosingBeforeTheStart) {
    Machine m({});
    EXPECT_EQ(kinds(m.closing(error("closing"))), (K{Kind::complete}));
    EXPECT_TRUE(kinds(m.start()).empty());
}

// Confirm and record: what is taken goes through replica sync, then is
// recorded before the caller is told; never recorded when replicas refuse it.

Machine::Options confirming(std::optional<Machine::Clock::time_point> deadline = std::nullopt) {
    Machine::Options o = gives_up_and_back();
    o.confirms = true;
    o.records = true;
    o.deadline = deadline;
    return o;
}

detail::Failure unconfirmed_error() { return {errc::replicas_unconfirmed, "given back (replica_sync = required)"}; }

TEST(AcquireMachine, ConfirmedThenRecordedThenComplete) {
    Machine m(confirming());
    to_subscribed_attempt(m);
    // Off the channel before the WAIT; the confirm last, as the driver may answer at once.
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::acquired(9), t0)), (K{Kind::unsubscribe, Kind::confirm}));
    EXPECT_EQ(m.state(), State::confirming);
    EXPECT_TRUE(kinds(m.woken()).empty());  // no longer listening
    EXPECT_TRUE(kinds(m.timer_fired(t0 + 1h)).empty());
    EXPECT_EQ(kinds(m.confirmed()), (K{Kind::record, Kind::complete}));
    EXPECT_TRUE(m.outcome().acquired);
    EXPECT_EQ(m.outcome().token, 9);
    EXPECT_TRUE(kinds(m.confirmed()).empty());  // once
}

TEST(AcquireMachine, RecordsWithoutConfirmWhereNothingIsWritten) {
    Machine::Options o;
    o.records = true;
    Machine m(o);
    m.start();
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::acquired(), t0)), (K{Kind::record, Kind::complete}));
}

// Replica sync refused what the attempt took: it is given back, and then the
// acquire tries again after the pause, fails with the refusal, or ends as
// stopped or closed. A table of every case, without a server.
TEST(AcquireMachine, AfterReplicasRefusedTheHold) {
    const auto pause = Machine::Options{}.replica_retry_pause;
    enum class Seen { nothing, stop_while_confirming, stop_while_giving_back, closing_while_confirming,
                      closing_while_giving_back };
    enum class Then { retry, fail, stopped, closed };
    struct Row {
        const char* what;
        std::optional<Machine::Clock::time_point> deadline;
        Seen seen;
        bool answered;  // the WAIT got a reply: the give-back is awaited
        Then then;
    } rows[] = {
        {"lock(): no deadline, waits on", std::nullopt, Seen::nothing, true, Then::retry},
        {"a deadline past the pause", t0 + pause + 1ms, Seen::nothing, true, Then::retry},
        {"a deadline the pause would reach", t0 + pause, Seen::nothing, true, Then::fail},
        {"a deadline before the pause ends", t0 + pause / 2, Seen::nothing, true, Then::fail},
        {"try_lock(): a deadline already passed", t0 - 1ms, Seen::nothing, true, Then::fail},
        {"stopped while confirming: not acquired, no error", std::nullopt, Seen::stop_while_confirming, true,
         Then::stopped},
        {"stopped while giving back", std::nullopt, Seen::stop_while_giving_back, true, Then::stopped},
        {"stopped beats a deadline that has passed", t0 - 1ms, Seen::stop_while_confirming, true, Then::stopped},
        {"the client closing while confirming", std::nullopt, Seen::closing_while_confirming, true, Then::closed},
        {"the client closing while giving back", std::nullopt, Seen::closing_while_giving_back, true, Then::closed},
        {"no reply to the WAIT: given back unawaited, then waits on", std::nullopt, Seen::nothing, false,
         Then::retry},
        {"no reply to the WAIT, a try: fails at once", t0 - 1ms, Seen::nothing, false, Then::fail},
        {"no reply to the WAIT, stopped meanwhile", std::nullopt, Seen::stop_while_confirming, false,
         Then::stopped},
    };
    for (const Row& row : rows) {
        SCOPED_TRACE(row.what);
        Machine m(confirming(row.deadline));
        m.start();
        ASSERT_EQ(kinds(m.attempt_replied(Attempt::acquired(), t0)), (K{Kind::confirm}));
        if (row.seen == Seen::stop_while_confirming) {
            EXPECT_TRUE(kinds(m.cancel_requested()).empty());
        }
        if (row.seen == Seen::closing_while_confirming) {
            EXPECT_TRUE(kinds(m.closing(error("closing"))).empty());
        }
        Machine::Actions decided;
        const auto refused = m.unconfirmed(unconfirmed_error(), row.answered, t0);
        ASSERT_GE(refused.size(), 1u);
        EXPECT_EQ(refused[0].kind, Kind::give_back);
        EXPECT_EQ(refused[0].background, !row.answered);
        if (row.answered) {
            EXPECT_EQ(refused.size(), 1u);
            EXPECT_EQ(m.state(), State::leaving);
            if (row.seen == Seen::stop_while_giving_back) {
                EXPECT_TRUE(kinds(m.cancel_requested()).empty());
            }
            if (row.seen == Seen::closing_while_giving_back) {
                EXPECT_TRUE(kinds(m.closing(error("closing"))).empty());
            }
            decided = m.left(t0);
        } else {
            for (std::size_t i = 1; i < refused.size(); ++i) decided.push(refused[i]);
        }
        // Never recorded: the caller is not told of a hold replicas refused.
        switch (row.then) {
            case Then::retry:
                ASSERT_EQ(kinds(decided), (K{Kind::arm_timer}));
                EXPECT_EQ(decided[0].at, t0 + pause);
                EXPECT_EQ(m.state(), State::pausing);
                EXPECT_TRUE(kinds(m.timer_fired(t0 + pause - 1ms)).size() == 1);  // early: armed again
                EXPECT_EQ(kinds(m.timer_fired(t0 + pause)), (K{Kind::send_attempt}));
                break;
            case Then::fail:
                EXPECT_EQ(kinds(decided), (K{Kind::complete}));
                EXPECT_TRUE(m.outcome().error.is(errc::replicas_unconfirmed));
                EXPECT_FALSE(m.outcome().acquired);
                break;
            case Then::stopped:
                EXPECT_EQ(kinds(decided), (K{Kind::complete}));
                EXPECT_FALSE(m.outcome().error);
                EXPECT_FALSE(m.outcome().acquired);
                break;
            case Then::closed:
                EXPECT_EQ(kinds(decided), (K{Kind::complete}));
                EXPECT_EQ(what(m.outcome().error), "closing");
                break;
        }
    }
}

// The retry is the same operation going on: its next attempt takes the hold,
// confirmed this time, and only then recorded.
TEST(AcquireMachine, RetryAfterThePauseTakesConfirmsAndRecords) {
    Machine m(confirming());
    m.start();
    m.attempt_replied(Attempt::acquired(), t0);
    m.unconfirmed(unconfirmed_error(), true, t0);
    m.left(t0 + 5ms);
    ASSERT_EQ(m.state(), State::pausing);
    EXPECT_EQ(m.timer_at(), t0 + 5ms + Machine::Options{}.replica_retry_pause);
    ASSERT_EQ(kinds(m.timer_fired(m.timer_at())), (K{Kind::send_attempt}));
    // Refused now (another took it meanwhile): waits on its channel as any acquire.
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::refused(300), t0 + 1s)), (K{Kind::arm_timer, Kind::subscribe}));
    EXPECT_EQ(kinds(m.subscribed()), (K{Kind::send_attempt}));
    EXPECT_EQ(kinds(m.attempt_replied(Attempt::acquired(4), t0 + 2s)), (K{Kind::unsubscribe, Kind::confirm}));
    EXPECT_EQ(kinds(m.confirmed()), (K{Kind::record, Kind::complete}));
    EXPECT_TRUE(m.outcome().acquired);
    EXPECT_EQ(m.outcome().token, 4);
    EXPECT_FALSE(m.outcome().error);
}

// Bound passed while the refused hold is given back: decided as its end would.
TEST(AcquireMachine, OverdueGiveBackOfARefusedHoldDecidesAsItsEnd) {
    Machine m(confirming());
    m.start();
    m.attempt_replied(Attempt::acquired(), t0);
    m.unconfirmed(unconfirmed_error(), true, t0);
    EXPECT_EQ(kinds(m.overdue(t0 + 250ms)), (K{Kind::arm_timer}));
    EXPECT_TRUE(kinds(m.left(t0 + 300ms)).empty());  // the step's own end, late: ignored
    EXPECT_EQ(m.timer_at(), t0 + 250ms + Machine::Options{}.replica_retry_pause);
}

TEST(AcquireMachine, StopOrClosingDuringThePauseEndsIt) {
    for (const bool stop : {true, false}) {
        Machine m(confirming());
        m.start();
        m.attempt_replied(Attempt::acquired(), t0);
        m.unconfirmed(unconfirmed_error(), true, t0);
        m.left(t0);
        ASSERT_EQ(m.state(), State::pausing);
        // No channel and no queue place to leave: complete at once.
        EXPECT_EQ(kinds(stop ? m.cancel_requested() : m.closing(error("closing"))), (K{Kind::complete}));
        EXPECT_FALSE(m.outcome().acquired);
        EXPECT_EQ(static_cast<bool>(m.outcome().error), !stop);
        EXPECT_TRUE(kinds(m.timer_fired(t0 + 1s)).empty());
    }
}

}  // namespace
}  // namespace holdfast::detail
