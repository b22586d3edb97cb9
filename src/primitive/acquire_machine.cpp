#include "primitive/acquire_machine.hpp"

#include <algorithm>
#include <utility>

namespace holdfast::detail {

namespace {

using Kind = AcquireMachine::Action::Kind;
using State = AcquireMachine::State;

}  // namespace

AcquireMachine::AcquireMachine(Options options) : options_(std::move(options)), random_(options_.seed) {}

bool AcquireMachine::in_flight() const {
    switch (state_) {
        case State::attempting:
        case State::attempting_retry:
        case State::attempting_woken:
        case State::cancelling:
        case State::failing: return true;
        default: return false;
    }
}

AcquireMachine::Actions AcquireMachine::start() {
    if (state_ != State::idle) return {};
    return attempt(false);
}

AcquireMachine::Actions AcquireMachine::attempt(bool led_by_wake) {
    state_ = State::attempting;
    handoff_seen_ = false;
    led_by_wake_ = led_by_wake;
    Actions actions;
    actions.push({Kind::send_attempt});
    return actions;
}

AcquireMachine::Actions AcquireMachine::attempt_replied(const Attempt& result, Clock::time_point now) {
    if (!in_flight()) return {};  // the client shut down meanwhile
    const State was = state_;
    // A wake-up taken during the attempt, unused if the operation ends now.
    const std::uint8_t held = was == State::attempting_woken ? 1 : 0;
    switch (result.outcome) {
        case Attempt::Outcome::acquired:
            if (was == State::cancelling && options_.gives_back) {
                // Stopped: the hold goes back (its release wakes the next waiter).
                Actions actions;
                if (subscribed_) actions.push({Kind::unsubscribe});
                subscribed_ = false;
                actions.push({Kind::give_back});
                state_ = State::leaving;
                outcome_ = {};
                return actions;
            }
            if (options_.confirms) {
                Actions actions;
                if (subscribed_) actions.push({Kind::unsubscribe});
                subscribed_ = false;
                state_ = State::confirming;
                outcome_ = {nullptr, true, result.token};
                actions.push({Kind::confirm});  // last: the driver may answer at once
                return actions;
            }
            return finish({nullptr, true, result.token}, 0);
        case Attempt::Outcome::failed:
            if (was == State::cancelling) return finish({}, held);
            return finish({result.error, false, 0}, held);
        case Attempt::Outcome::refused: break;
    }
    // The refusal says nothing of later waiters: the wake-up that led here is theirs.
    const std::uint8_t passed = result.pass_on && led_by_wake_ ? 1 : 0;
    if (was == State::cancelling) return finish({}, held + passed);
    if (was == State::failing) return finish({outcome_.error, false, 0}, held + passed);
    if (options_.deadline && *options_.deadline <= now) return finish({}, held + passed);
    Actions actions;
    if (options_.backoff) {
        const long long pause = next_backoff();
        sleep(actions, result.ttl == -1 ? pause : std::min(result.ttl, pause), now);
        return actions;
    }
    // Only to later joiners, so two waiters for too many permits cannot hand
    // one wake-up back and forth.
    if (passed) actions.push({Kind::pass_on, 1, true});
    if (!subscribed_) {
        // Last: an active subscription confirms (and so retries) at once.
        subscribed_ = true;
        sleep(actions, result.ttl, now);
        actions.push({Kind::subscribe});
        return actions;
    }
    // Woken during the attempt: it may have run before the release.
    if (was == State::attempting_woken || was == State::attempting_retry) {
        for (const Action& a : attempt(was == State::attempting_woken)) actions.push(a);
        return actions;
    }
    sleep(actions, result.ttl, now);
    return actions;
}

void AcquireMachine::sleep(Actions& actions, long long ttl, Clock::time_point now) {
    auto wake = options_.deadline.value_or(Clock::time_point::max());
    if (ttl == -2) ttl = 0;  // released between checks: retry now
    // A handoff elsewhere during the attempt: the TTL may be a gone holder's.
    if (handoff_seen_ && (ttl < 0 || ttl > options_.check_after_handoff.count()))
        ttl = options_.check_after_handoff.count();
    // Capped: a peer's TTL may be near Redis's limit, and now + ttl would overflow.
    constexpr long long longest_sleep_ms = 24LL * 3600 * 1000;
    if (ttl >= 0) wake = std::min(wake, now + std::chrono::milliseconds(std::min(ttl, longest_sleep_ms)));
    timer_at_ = wake;
    state_ = State::sleeping;
    Action arm{Kind::arm_timer};
    arm.at = wake;
    actions.push(arm);
}

// 1, 2, 4 ... ms up to the cap, each drawn from [half, full] so that
// spinners started together drift apart.
long long AcquireMachine::next_backoff() {
    const long long cap = options_.backoff->max.count();
    backoff_ms_ = backoff_ms_ == 0 ? options_.backoff->first.count() : std::min(cap, backoff_ms_ * 2);
    return std::uniform_int_distribution<long long>(std::max(1LL, backoff_ms_ / 2), std::max(1LL, backoff_ms_))(random_);
}

AcquireMachine::Actions AcquireMachine::subscribed() {
    if (state_ == State::sleeping) return attempt(false);  // a release may have come before the subscription
    if (state_ == State::attempting) state_ = State::attempting_retry;
    return {};
}

AcquireMachine::Actions AcquireMachine::woken() {
    Actions actions;
    if (!subscribed_) return actions;  // not listening (a spinner): no business of this one
    if (state_ == State::sleeping) {
        // Used up: a refusal means another holder, whose release wakes again.
        actions = attempt(true);
        actions.took_wake = true;
    } else if (state_ == State::attempting) {
        state_ = State::attempting_woken;
        actions.took_wake = true;
    }
    // Otherwise declined: already due to retry, or ending; the next listener gets it.
    return actions;
}

AcquireMachine::Actions AcquireMachine::named_elsewhere(Clock::time_point now) {
    Actions actions;
    if (options_.check_after_handoff.count() <= 0 || handoff_seen_) return actions;
    if (state_ == State::attempting || state_ == State::attempting_retry) {
        // Its reply may carry the TTL of a holder already gone: the check then.
        handoff_seen_ = true;
        return actions;
    }
    if (state_ != State::sleeping) return actions;
    handoff_seen_ = true;
    // What it slept for (the last holder's TTL, a promise's end) is over: one
    // check later, in case the one named never comes. Not pushed back by later
    // handoffs: a waiter whose listing was lost would otherwise never try.
    const auto check = now + options_.check_after_handoff;
    timer_at_ = options_.deadline ? std::min(*options_.deadline, check) : check;
    Action arm{Kind::arm_timer};
    arm.at = timer_at_;
    actions.push(arm);
    return actions;
}

AcquireMachine::Actions AcquireMachine::timer_fired(Clock::time_point now) {
    if (state_ != State::sleeping && state_ != State::pausing) return {};
    if (now < timer_at_) {
        // Early: a wait for an earlier sleep, or one the driver left running
        // when the sleep was moved later. Wait again, for the time due now.
        Actions actions;
        Action arm{Kind::arm_timer};
        arm.at = timer_at_;
        actions.push(arm);
        return actions;
    }
    // After a pause the deadline is past only if the timer was late: one more try.
    if (state_ == State::sleeping && options_.deadline && *options_.deadline <= now) return finish({}, 0);
    return attempt(false);
}

AcquireMachine::Actions AcquireMachine::cancel_requested() {
    switch (state_) {
        case State::idle:
        case State::sleeping: return finish({}, 0);
        case State::attempting_woken: {
            // This operation will not retry: the wake-up is the next waiter's now.
            state_ = State::cancelling;
            Actions actions;
            actions.push({Kind::pass_on, 1, false});
            return actions;
        }
        case State::attempting:
        case State::attempting_retry:
        case State::failing: state_ = State::cancelling; return {};
        case State::confirming:
        case State::leaving: stop_seen_ = true; return {};  // read if replica sync refuses the hold
        case State::pausing: return end({}, {});
        default: return {};
    }
}

AcquireMachine::Actions AcquireMachine::channel_refused(Failure error) {
    subscribed_ = false;  // the subscriber let every listener of the channel go
    if (state_ == State::sleeping) return finish({std::move(error), false, 0}, 0);
    if (state_ == State::attempting || state_ == State::attempting_retry || state_ == State::attempting_woken) {
        // The attempt in flight may take it yet; else there is nothing to wait for.
        outcome_.error = std::move(error);  // what the operation ends with, unless the attempt takes it
        state_ = State::failing;
    }
    return {};
}

AcquireMachine::Actions AcquireMachine::closing(Failure error) {
    if (state_ == State::confirming || (state_ == State::leaving && refused_by_replicas_)) {
        // The step in flight ends anyway; then no retry. Confirmed, the hold is still the caller's.
        closed_seen_ = true;
        outcome_.error = std::move(error);
        return {};
    }
    if (state_ == State::pausing) return end({std::move(error), false, 0}, {});
    if (state_ == State::leaving || state_ == State::done) return {};
    return finish({std::move(error), false, 0}, state_ == State::attempting_woken ? 1 : 0);
}

AcquireMachine::Actions AcquireMachine::left(Clock::time_point now) {
    if (state_ != State::leaving) return {};
    if (std::exchange(refused_by_replicas_, false)) return after_refusal({}, now);
    return end(std::move(outcome_), {});
}

// What the step's end would do; the step's own end is then ignored.
AcquireMachine::Actions AcquireMachine::overdue(Clock::time_point now) { return left(now); }

AcquireMachine::Actions AcquireMachine::confirmed() {
    if (state_ != State::confirming) return {};
    return finish({nullptr, true, outcome_.token}, 0);
}

AcquireMachine::Actions AcquireMachine::unconfirmed(Failure error, bool answered, Clock::time_point now) {
    if (state_ != State::confirming) return {};
    if (!closed_seen_) outcome_.error = std::move(error);
    outcome_.acquired = false;
    outcome_.token = 0;
    Actions actions;
    Action give_back{Kind::give_back};
    give_back.background = !answered;  // a server that did not answer the WAIT: the caller will not wait on it
    actions.push(give_back);
    if (!answered) return after_refusal(actions, now);
    state_ = State::leaving;
    refused_by_replicas_ = true;
    return actions;
}

// A wait with time left goes on, as after any other refusal; one without (a
// try, a deadline the pause would reach) fails with the refusal. A stop or a
// shutdown seen meanwhile ends it.
AcquireMachine::Actions AcquireMachine::after_refusal(Actions actions, Clock::time_point now) {
    if (closed_seen_) return end(std::move(outcome_), actions);  // with the closing error
    if (stop_seen_) return end({}, actions);
    if (options_.deadline && *options_.deadline <= now + options_.replica_retry_pause)
        return end(std::move(outcome_), actions);
    outcome_ = {};
    state_ = State::pausing;
    timer_at_ = now + options_.replica_retry_pause;
    Action arm{Kind::arm_timer};
    arm.at = timer_at_;
    actions.push(arm);
    return actions;
}

AcquireMachine::Actions AcquireMachine::end(Outcome outcome, Actions actions) {
    outcome_ = std::move(outcome);
    state_ = State::done;
    actions.push({Kind::complete});
    return actions;
}

AcquireMachine::Actions AcquireMachine::finish(Outcome outcome, std::uint8_t hand_on) {
    Actions actions;
    if (subscribed_) actions.push({Kind::unsubscribe});
    subscribed_ = false;
    // After leaving, so an offer to every waiter skips this one.
    if (hand_on > 0 && !outcome.acquired && !options_.backoff) actions.push({Kind::pass_on, hand_on, false});
    const bool give_up = !outcome.acquired && options_.gives_up;
    if (outcome.acquired && options_.records) actions.push({Kind::record});
    outcome_ = std::move(outcome);
    state_ = give_up ? State::leaving : State::done;
    actions.push({give_up ? Kind::give_up : Kind::complete});
    return actions;
}

}  // namespace holdfast::detail
