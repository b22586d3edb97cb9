// The driver of one acquire (primitive/acquire.hpp): feeds the machine
// (primitive/acquire_machine.hpp) what the transport, the timer and the stop
// token report, and carries out its actions. The hold pipeline derives from
// it (one operation per hold, one allocation per waiter): it owns the hold
// and request, and confirms and records what is taken. Lives on the loop
// thread, but for start().
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>

#include "primitive/acquire.hpp"
#include "primitive/acquire_machine.hpp"
#include "primitive/alarm_clock.hpp"
#include "primitive/hold_id.hpp"
#include "primitive/wait_queue.hpp"
#include "transport/waiter_list.hpp"

namespace holdfast::detail {

/// What an operation does with what is taken: AcquireOperation's confirm() and record().
struct AcquireSteps {
    bool confirms = false;
    bool records = false;
};

class AcquireOperation : public Waiter,
                         public AlarmClock::Sleeper,
                         public std::enable_shared_from_this<AcquireOperation> {
public:
    /// Runs the request, once; ended() tells how it went. The first attempt
    /// is sent from the calling thread; the object must be owned by a shared_ptr.
    void start();

    void on_subscribed() override;
    bool on_wake() override;
    std::uint64_t waiter_id() const override { return request_.waiter_id; }
    void on_named_elsewhere() override;
    void on_closed() override;
    void on_refused(const Failure& error) override;
    void on_alarm(std::chrono::steady_clock::time_point now) override;

protected:
    /// `hold` and `request` are the derived object's, kept as long as it.
    AcquireOperation(Transport& transport, WaitQueues& queues, const HoldId& hold, const AcquireRequest& request,
                     AcquireSteps steps = {})
        : transport_(transport), queues_(queues), hold_(hold), request_(request), steps_(steps) {}
    ~AcquireOperation() override;

    /// AcquireSteps::confirms: have replica sync confirm what was taken; answer with
    /// replicas_answered(), on the loop thread.
    virtual void confirm() {}
    /// `refusal` null: confirmed. `answered`: the WAIT got a reply.
    void replicas_answered(Failure refusal, bool answered);
    /// AcquireSteps::records: keep the hold taken before the caller is told.
    virtual void record() {}

    /// The run ended: error set, or whether the primitive was acquired (with
    /// the attempt's token). On the loop thread, after the operation left its channel.
    virtual void ended(Failure error, bool acquired, std::int64_t token) = 0;

private:
    void run(const AcquireMachine::Actions& actions);
    void attempt_replied(Attempt result);
    void perform(const AcquireMachine::Action& action);
    void join();
    void leave_queue();
    void arm(std::chrono::steady_clock::time_point at);
    void leave(const std::function<void(const HoldId&, std::function<void()>)>& step);
    void give_back_unawaited();
    void complete();
    Failure closing_error() const;
    void count_waiting();
    std::chrono::steady_clock::time_point tell_by() const;

    Transport& transport_;
    WaitQueues& queues_;
    const HoldId& hold_;
    const AcquireRequest& request_;
    const AcquireSteps steps_;
    std::optional<AcquireMachine> machine_;  // made by start()
    std::uint32_t leaves_ = 0;               // give-up and give-back steps: a late end of an earlier one is ignored
    std::chrono::steady_clock::time_point started_{};
    bool waiting_ = false;
    std::shared_ptr<WaitQueue> queue_;  // the channel's, once joined
    WaiterList::Link listed_;           // among the transport's waiters
    // Only with a stop token that can stop: an inline one would cost every waiter.
    using Cancel = std::stop_callback<std::function<void()>>;
    std::unique_ptr<Cancel> cancel_;
};

}  // namespace holdfast::detail
