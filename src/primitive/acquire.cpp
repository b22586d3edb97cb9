#include "primitive/acquire.hpp"

#include <algorithm>
#include <optional>
#include <random>

#include "common/quoted.hpp"
#include "primitive/acquire_operation.hpp"
#include "primitive/names.hpp"
#include "primitive/wait_queues.hpp"
#include "telemetry/telemetry.hpp"
#include "transport/transport.hpp"

namespace holdfast::detail {

std::size_t redisson_lock_wakes(std::string_view payload) {
    if (payload == unlock_all_message) return wakes::all;
    return waiter_named_in(payload) != 0 ? wakes::named : 1;
}

namespace {

using Clock = std::chrono::steady_clock;
using Action = AcquireMachine::Action;

AcquireMachine::Options machine_options(const AcquireRequest& request, const Config& config, bool confirms,
                                        bool records) {
    AcquireMachine::Options options;
    options.confirms = confirms;
    options.records = records;
    options.deadline = request.deadline;
    options.backoff = request.backoff;
    options.gives_up = static_cast<bool>(request.give_up);
    options.gives_back = static_cast<bool>(request.give_back);
    if (request.waiter_id != 0) options.check_after_handoff = config.lock_handoff_check;
    if (request.backoff) {
        static thread_local std::minstd_rand random{std::random_device{}()};
        options.seed = static_cast<std::uint32_t>(random());
    }
    return options;
}

}  // namespace

AcquireOperation::~AcquireOperation() = default;

void AcquireOperation::start() {
    auto self = shared_from_this();
    machine_.emplace(machine_options(request_, transport_.config(), steps_.confirms, steps_.records));
    started_ = Clock::now();
    if (!transport_.add_waiter(listed_, self)) return run(machine_->closing(closing_error()));
    // Started before a stop can reach the loop, sent after.
    const auto first = machine_->start();
    if (request_.stop.stop_possible()) {
        std::weak_ptr<AcquireOperation> weak = self;
        cancel_ = std::make_unique<Cancel>(request_.stop, [weak, &transport = transport_] {
            transport.run_on_loop([weak] {
                if (auto self = weak.lock()) self->run(self->machine_->cancel_requested());
            });
        });
    }
    // The first attempt is sent from the caller's thread (the last thing
    // done here): Connection::submit is thread-safe and orders the
    // operation's writes before the loop sees the reply.
    run(first);
}

void AcquireOperation::on_subscribed() { run(machine_->subscribed()); }

bool AcquireOperation::on_wake() {
    const auto actions = machine_->woken();
    run(actions);
    return actions.took_wake;
}

void AcquireOperation::on_named_elsewhere() { run(machine_->named_elsewhere(Clock::now())); }
void AcquireOperation::on_closed() { run(machine_->closing(closing_error())); }
void AcquireOperation::on_refused(const Failure& error) { run(machine_->channel_refused(error)); }

void AcquireOperation::run(const AcquireMachine::Actions& actions) {
    for (const Action& action : actions) perform(action);
}

void AcquireOperation::perform(const Action& action) {
    switch (action.kind) {
        case Action::Kind::send_attempt:
            if (request_.sent_at) *request_.sent_at = Clock::now();
            return request_.attempt(hold_, [self = shared_from_this()](Attempt result) {
                self->attempt_replied(std::move(result));
            });
        case Action::Kind::subscribe: count_waiting(); return join();
        case Action::Kind::unsubscribe: return leave_queue();
        case Action::Kind::arm_timer: return arm(action.at);
        case Action::Kind::pass_on:
            // Also after leaving: a wake-up handed on then goes to the
            // waiters still in the queue.
            if (!queue_) return;
            if (action.after_self) return queue_->pass_on(action.count, this);
            return queue_->hand_out(action.count);
        case Action::Kind::give_up: return leave(request_.give_up);
        case Action::Kind::give_back: return action.background ? give_back_unawaited() : leave(request_.give_back);
        case Action::Kind::confirm: return confirm();
        case Action::Kind::record: return record();
        case Action::Kind::complete: return complete();
    }
}

// Joins the channel's queue, the one listener all local waiters on the
// channel share; runs on_subscribed() at once if the channel is active.
void AcquireOperation::join() {
    queue_ = queues_.join(request_.channel, shared_from_this(), request_.wakes, request_.sharded);
    // The queue keeps the first waiter's hook, with the key (not the waiter's hold).
    if (request_.unclaimed_name && !queue_->hears_unclaimed())
        queue_->on_unclaimed([step = request_.unclaimed_name, key = hold_.key](std::uint64_t id) { step(key, id); });
}

// The last waiter out takes the queue off the channel. Also at the end:
// a queue the subscriber let go (refused, closed) goes with its waiters.
void AcquireOperation::leave_queue() {
    if (queue_) queues_.leave(request_.channel, this);
}

void AcquireOperation::arm(Clock::time_point at) {
    count_waiting();
    // An alarm due sooner is left: a lock's every release moves its listed
    // waiters' checks later, and an early alarm arms again.
    AlarmClock& alarms = queues_.alarms();
    if (AlarmClock::is_set(*this) && alarms.due(*this) <= at) return;
    alarms.set(shared_from_this(), at);
}

void AcquireOperation::on_alarm(Clock::time_point now) {
    if (machine_->state() == AcquireMachine::State::leaving) return run(machine_->overdue(now));
    run(machine_->timer_fired(now));
}

// A refusal without a TTL is verified first where the primitive asks (a lock:
// is the key a lock at all?), its finding what the machine is told.
void AcquireOperation::attempt_replied(Attempt result) {
    if (result.outcome == Attempt::Outcome::refused && result.ttl == -1 && request_.verify_no_ttl)
        return request_.verify_no_ttl(hold_, [self = shared_from_this()](Attempt found) {
            self->run(self->machine_->attempt_replied(found, Clock::now()));
        });
    run(machine_->attempt_replied(result, Clock::now()));
}

void AcquireOperation::replicas_answered(Failure refusal, bool answered) {
    if (!refusal) return run(machine_->confirmed());
    run(machine_->unconfirmed(std::move(refusal), answered, Clock::now()));
}

// Give-up or give-back: the machine completes once the primitive is done, or
// once the caller's bound passed (tell_by), the step going on in the background.
void AcquireOperation::leave(const std::function<void(const HoldId&, std::function<void()>)>& step) {
    auto self = shared_from_this();  // the alarm may have been its last owner
    queues_.alarms().cancel(*this);
    {
        // Sent before the caller is told, and run by the server in that
        // place: the caller's next acquire of the primitive goes behind it.
        Transport::InOrder in_order;
        step(hold_, [self, leave = ++leaves_] {
            if (self->leaves_ == leave) self->run(self->machine_->left(Clock::now()));
        });
    }
    if (machine_->state() != AcquireMachine::State::leaving) return;  // done already
    const auto by = tell_by();
    if (Clock::now() >= by) return run(machine_->overdue(Clock::now()));
    queues_.alarms().set(std::move(self), by);
}

// A give-back to a server that did not answer: sent in order, its end not awaited.
void AcquireOperation::give_back_unawaited() {
    Transport::InOrder in_order;
    request_.give_back(hold_, [] {});
}

// When the caller of a run that only waits for its give-up or give-back step
// is told at the latest (docs/lock.md): Config::timeout after the call, or a
// short while after the step was sent if that is later (a deadline, a stop),
// as a server that answers does so in that while; at once after a run that
// got no reply, as the step then waits for a server that does not answer.
Clock::time_point AcquireOperation::tell_by() const {
    const auto now = Clock::now();
    const Failure& error = machine_->outcome().error;
    if (error && is_unanswered(error.code())) return now;
    const auto timeout = transport_.config().timeout;
    using std::chrono::milliseconds;
    return std::max(started_ + timeout, now + std::clamp<Clock::duration>(timeout / 8, milliseconds(5), milliseconds(250)));
}

void AcquireOperation::complete() {
    const auto self = shared_from_this();  // the alarm may have been its last owner
    queues_.alarms().cancel(*this);
    // Destroyed here, on the loop: the last reference may be dropped on
    // the caller's thread (still in start()) after the client is gone.
    cancel_.reset();
    leave_queue();
    queue_.reset();
    transport_.remove_waiter(listed_);
    if (waiting_) request_.meter.telemetry->waiting(request_.meter.kind, -1);
    waiting_ = false;
    const auto outcome = machine_->outcome();
    ended(outcome.error, outcome.acquired, outcome.token);
}

// Names what the caller waited for: its lock (an operation of no hold, the channel).
Failure AcquireOperation::closing_error() const {
    if (!hold_.key.empty()) return client_closed("; stopped waiting for " + hold_.subject());
    return client_closed("; stopped waiting" +
                         (request_.channel.empty() ? std::string() : " on " + quoted(request_.channel)));
}

// Counted among the waiters once it first waits.
void AcquireOperation::count_waiting() {
    if (waiting_ || !request_.meter.telemetry) return;
    waiting_ = true;
    request_.meter.telemetry->waiting(request_.meter.kind, +1);
}

namespace {

// What a standalone operation owns: made before the operation that reads it.
struct Standalone {
    AcquireRequest request;
    AcquireHandler done;
};

// An operation with no hold to name: it owns its request and handler.
class StandaloneAcquire final : private Standalone, public AcquireOperation {
public:
    StandaloneAcquire(Transport& transport, WaitQueues& queues, AcquireRequest request, AcquireHandler done)
        : Standalone{std::move(request), std::move(done)},
          AcquireOperation(transport, queues, no_hold, Standalone::request) {}

private:
    void ended(Failure error, bool acquired, std::int64_t token) override {
        auto handler = std::move(done);
        handler(std::move(error), acquired, token);
    }

    static inline const HoldId no_hold{};
};

}  // namespace

void acquire(Transport& transport, WaitQueues& queues, AcquireRequest request, AcquireHandler done) {
    std::make_shared<StandaloneAcquire>(transport, queues, std::move(request), std::move(done))->start();
}

}  // namespace holdfast::detail
