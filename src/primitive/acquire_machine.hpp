// The acquire skeleton as a state machine without I/O or clock: events in
// (with the time they happened where time matters), actions out. One machine
// per hold, from the first attempt to the caller: attempt, wait, and once
// taken, confirm (replica sync: under `required`, what no replica has is
// given back and tried again after a pause), record, complete. The driver
// (primitive/acquire.cpp) carries the actions out in the order given; an
// event it feeds while carrying them out (a subscription already active
// confirms at once) is handled at once, so actions that may cause one come last.
// docs/design.md draws its states.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>

#include "primitive/acquire.hpp"

namespace holdfast::detail {

class AcquireMachine {
public:
    using Clock = std::chrono::steady_clock;

    enum class State : std::uint8_t {
        idle,              ///< not started
        attempting,        ///< an attempt in flight
        attempting_retry,  ///< ... and the subscription became active meanwhile: retry if refused
        attempting_woken,  ///< ... and a wake-up was taken for it: retry if refused, hand it on if not used
        cancelling,        ///< ... and a stop was requested: ends at its reply, giving back what it took
        failing,           ///< ... and the channel was refused: ends at its reply, unless it took the primitive
        sleeping,          ///< until a wake-up, the subscription confirmed, or the timer
        leaving,           ///< giving up or giving back: completes when the primitive says it is done
        confirming,        ///< taken, until replica sync confirms it (or refuses: give back, then decide)
        pausing,           ///< given back unconfirmed: tries again when the timer fires
        done,
    };

    struct Action {
        enum class Kind : std::uint8_t {
            send_attempt,  ///< run request.attempt; its reply is attempt_replied()
            subscribe,     ///< listen on the channel; confirmation is subscribed()
            unsubscribe,   ///< stop listening
            arm_timer,     ///< (re)arm the one timer for `at`; it fires as timer_fired() (a wait
                           ///< still due before `at` may be left: an early fire arms again)
            pass_on,       ///< offer `count` wake-ups to the other waiters (`after_self`: later joiners only)
            give_up,       ///< run request.give_up, then left()
            give_back,     ///< run request.give_back (release what the attempt took), then left();
                           ///< `background`: sent, not awaited (the actions after it go on)
            confirm,       ///< replica sync for what was taken: confirmed() or unconfirmed()
            record,        ///< keep the hold (ledger, watchdog) before the caller learns of it
            complete,      ///< report outcome() to the caller
        };
        Kind kind = Kind::complete;
        std::uint8_t count = 0;
        bool after_self = false;
        bool background = false;
        Clock::time_point at{};
    };

    /// One event's actions, in order; fixed capacity, no allocation.
    class Actions {
    public:
        const Action* begin() const { return items_.data(); }
        const Action* end() const { return items_.data() + size_; }
        std::size_t size() const { return size_; }
        const Action& operator[](std::size_t i) const { return items_[i]; }
        void push(Action action) { items_[size_++] = action; }
        /// woken(): the wake-up is used here (else the wait queue offers it to the next waiter).
        bool took_wake = false;

    private:
        std::array<Action, 4> items_{};
        std::uint8_t size_ = 0;
    };

    struct Options {
        /// nullopt: wait as long as it takes; a deadline already past: one attempt.
        std::optional<Clock::time_point> deadline;
        /// Set: sleep between attempts instead of listening on a channel.
        std::optional<Backoff> backoff;
        bool gives_up = false;    ///< the primitive has a give-up step
        bool gives_back = false;  ///< the primitive can give back a hold taken after a stop
        /// Asleep when a release names another waiter: try again after this
        /// long (zero: keep sleeping as before).
        std::chrono::milliseconds check_after_handoff{0};
        std::uint32_t seed = 1;   ///< backoff jitter
        bool confirms = false;    ///< what is taken goes through confirm (the acquire writes)
        bool records = false;     ///< what is taken is recorded before complete
        /// After replica sync refused a hold: a failover under way needs a moment.
        std::chrono::milliseconds replica_retry_pause{200};
    };

    struct Outcome {
        Failure error;
        bool acquired = false;
        std::int64_t token = 0;
    };

    explicit AcquireMachine(Options options);

    Actions start();
    Actions attempt_replied(const Attempt& result, Clock::time_point now);
    Actions subscribed();
    /// A wake-up offered: a message, or one handed on by another listener.
    Actions woken();
    /// A release named another waiter: the lock is promised to it.
    Actions named_elsewhere(Clock::time_point now);
    Actions timer_fired(Clock::time_point now);
    Actions cancel_requested();
    /// The server refused to subscribe to the channel (`error` says which).
    Actions channel_refused(Failure error);
    /// The client shuts down: no reply or message will come.
    Actions closing(Failure error);
    /// Replica sync confirmed what was taken (or is off, or has nothing to wait for).
    Actions confirmed();
    /// Replica sync refused what was taken (`error` names it): it goes back,
    /// then the acquire tries again after the pause if it may wait that long,
    /// else fails with `error` (or, stopped, ends not acquired). `answered`:
    /// false if the WAIT got no reply, so the give-back is not awaited.
    Actions unconfirmed(Failure error, bool answered, Clock::time_point now);
    /// The give-up or give-back step is done.
    Actions left(Clock::time_point now);
    /// The caller must be told now, while the give-up or give-back step goes
    /// on (the driver's bound passed, or the server does not answer): complete
    /// (or, after a refusal by replica sync, go on as left() would).
    Actions overdue(Clock::time_point now);

    State state() const { return state_; }
    /// What complete reports.
    const Outcome& outcome() const { return outcome_; }
    /// When the timer is due (the last arm_timer), for tests.
    Clock::time_point timer_at() const { return timer_at_; }

private:
    bool in_flight() const;
    Actions attempt(bool led_by_wake);
    /// Sleeps until the holder's TTL (ms; -1 none, -2 gone) or the deadline.
    void sleep(Actions& actions, long long ttl, Clock::time_point now);
    long long next_backoff();
    /// Ends: leave the channel, hand on `hand_on` unused wake-ups, then give
    /// up (not acquired, a give-up step) or complete.
    Actions finish(Outcome outcome, std::uint8_t hand_on);
    /// After replica sync's refusal and its give-back: pause and retry, or end.
    Actions after_refusal(Actions actions, Clock::time_point now);
    /// Ends with nothing left to undo (no channel, no queue place): complete.
    Actions end(Outcome outcome, Actions actions);

    Options options_;
    State state_ = State::idle;
    // Told of a handoff elsewhere since the last attempt was sent: its check
    // is armed (or due once the attempt in flight is refused), and later
    // handoffs do not push it back.
    bool handoff_seen_ = false;
    bool subscribed_ = false;    // resource: listening on the channel
    bool led_by_wake_ = false;   // the attempt in flight was started by a wake-up
    // Seen while confirming or giving back what replicas refused, when they
    // cannot act yet: the decision after the give-back reads them (the
    // closing error waits in outcome_.error).
    bool stop_seen_ = false;
    bool closed_seen_ = false;
    bool refused_by_replicas_ = false;  // leaving: the give-back of a refused hold
    Clock::time_point timer_at_{};
    long long backoff_ms_ = 0;
    std::minstd_rand random_;
    Outcome outcome_;  // failing: its error is the channel's refusal; confirming: the hold taken
};

}  // namespace holdfast::detail
