#include "primitive/acquire.hpp"

#include <asio.hpp>

#include <optional>
#include <random>

#include "common/quoted.hpp"
#include "holdfast/errors.hpp"
#include "telemetry/telemetry.hpp"
#include "transport/subscriber.hpp"
#include "transport/transport.hpp"

namespace holdfast::detail {

std::size_t redisson_lock_wakes(std::string_view payload) { return payload == "1" ? wakes::all : 1; }

namespace {

using Clock = std::chrono::steady_clock;

// Lives on the loop thread. States: attempting (a try in flight) or sleeping
// (timer armed, listening); `woken` records a wake-up that arrived while a
// try was in flight, since that try may have run before the release.
class AcquireOperation : public ChannelListener, public std::enable_shared_from_this<AcquireOperation> {
public:
    AcquireOperation(Transport& transport, AcquireRequest request, AcquireHandler done)
        : transport_(transport), request_(std::move(request)), done_(std::move(done)), started_(Clock::now()) {}

    void start() {
        auto self = shared_from_this();
        if (!transport_.add_waiter(self))
            return finish(std::make_exception_ptr(ConnectionError("holdfast: the client is shutting down")), false);
        if (request_.stop.stop_possible()) {
            std::weak_ptr<AcquireOperation> weak = self;
            cancel_.emplace(request_.stop, [weak, &transport = transport_] {
                transport.run_on_loop([weak] {
                    if (auto self = weak.lock()) self->cancel();
                });
            });
        }
        attempt();
    }

    std::size_t wakes(std::string_view payload) const override { return request_.wakes(payload); }

    void on_subscribed() override {
        if (finished_) return;
        if (attempting_) {
            woken_ = true;
            return;
        }
        cancel_sleep();
        attempt();
    }

    bool on_wake() override {
        if (finished_ || passing_on_) return false;
        if (attempting_) {
            if (woken_) return false;  // already due to retry: pass the wake-up on
            woken_ = true;
            consumed_wake_ = true;
            return true;
        }
        cancel_sleep();
        attempt(true);  // uses the wake-up: a refusal means another holder, whose release wakes again
        return true;
    }

    void on_closed() override {
        if (finished_) return;
        finish(std::make_exception_ptr(ConnectionError(
                   "holdfast: the client is shutting down; stopped waiting" +
                   (request_.channel.empty() ? std::string() : " on " + quoted(request_.channel)))),
               false);
    }

    void on_refused(std::exception_ptr error) override {
        if (finished_) return;
        // An attempt in flight may take it yet; else there is nothing to wait for.
        if (attempting_) {
            refusal_ = std::move(error);
            return;
        }
        finish(std::move(error), false);
    }

private:
    void attempt(bool on_wake = false) {
        attempting_ = true;
        woken_ = false;
        consumed_wake_ = false;
        wake_led_here_ = on_wake;
        request_.attempt([self = shared_from_this()](Attempt result) { self->on_attempt(std::move(result)); });
    }

    // Stops waiting, as the deadline would; an attempt in flight is awaited.
    void cancel() {
        if (finished_) return;
        if (attempting_) {
            cancelled_ = true;
            return;
        }
        finish(nullptr, false);
    }

    void on_attempt(Attempt result) {
        attempting_ = false;
        if (finished_) return;  // the client shut down meanwhile
        switch (result.outcome) {
            case Attempt::Outcome::acquired: return finish(nullptr, true, result.token);
            case Attempt::Outcome::failed: return finish(result.error, false);
            case Attempt::Outcome::refused: break;
        }
        if (refusal_) return finish(refusal_, false);
        if (cancelled_) return finish(nullptr, false);
        if (result.pass_on && wake_led_here_) {
            // Only to later waiters, so two waiters for too many permits
            // cannot hand one wake-up back and forth.
            wake_led_here_ = false;
            passing_on_ = true;
            transport_.subscriber().offer_after(request_.channel, 1, this);
            passing_on_ = false;
        }
        if (request_.deadline && *request_.deadline <= Clock::now()) return finish(nullptr, false);
        if (!waiting_ && request_.meter.telemetry) {
            waiting_ = true;
            request_.meter.telemetry->waiting(request_.meter.kind, +1);
        }
        if (request_.backoff) {
            const long long pause = next_backoff();
            return sleep(result.ttl == -1 ? pause : std::min(result.ttl, pause));
        }
        if (!subscribed_) {
            subscribed_ = true;
            // Runs on_subscribed() (and so the next attempt) at once if the
            // channel is already active; otherwise on confirmation.
            transport_.subscriber().add(request_.channel, shared_from_this());
            if (attempting_ || finished_) return;
        }
        if (woken_) return attempt(true);
        sleep(result.ttl);
    }

    // Until a message, the holder's TTL or the deadline, whichever is first.
    void sleep(long long ttl) {
        auto wake = request_.deadline.value_or(Clock::time_point::max());
        if (ttl == -2) ttl = 0;  // released between checks: retry now
        // Capped: a peer's TTL may be near Redis's limit, and now + ttl would overflow.
        constexpr long long longest_sleep_ms = 24LL * 3600 * 1000;
        if (ttl >= 0) wake = std::min(wake, Clock::now() + std::chrono::milliseconds(std::min(ttl, longest_sleep_ms)));
        // Made on first need: an uncontended acquire never sleeps.
        if (!timer_) timer_.emplace(transport_.loop());
        timer_->expires_at(wake);
        timer_->async_wait([self = shared_from_this()](asio::error_code ec) {
            if (ec || self->finished_ || self->attempting_) return;
            if (self->request_.deadline && *self->request_.deadline <= Clock::now())
                return self->finish(nullptr, false);
            self->attempt();
        });
    }

    // 1, 2, 4 ... ms up to the cap, each drawn from [half, full] so that
    // spinners started together drift apart.
    long long next_backoff() {
        const long long cap = request_.backoff->max.count();
        backoff_ = backoff_ == 0 ? request_.backoff->first.count() : std::min(cap, backoff_ * 2);
        static thread_local std::minstd_rand random{std::random_device{}()};
        return std::uniform_int_distribution<long long>(std::max(1LL, backoff_ / 2), std::max(1LL, backoff_))(random);
    }

    void cancel_sleep() {
        if (timer_) timer_->cancel();
    }

    void finish(std::exception_ptr error, bool acquired, std::int64_t token = 0) {
        finished_ = true;
        meter(error, acquired);
        cancel_sleep();
        cancel_.reset();
        transport_.remove_waiter(this);
        if (subscribed_) {
            transport_.subscriber().remove(request_.channel, this);
            // A release this waiter took for itself but cannot use (it gave up
            // or failed) belongs to the next waiter.
            if (consumed_wake_ && !acquired) transport_.subscriber().offer(request_.channel, 1);
        }
        if (!acquired && request_.give_up) {
            auto give_up = std::move(request_.give_up);
            return give_up([self = shared_from_this(), error = std::move(error)]() mutable {
                auto done = std::move(self->done_);
                done(std::move(error), false, 0);
            });
        }
        auto done = std::move(done_);
        done(std::move(error), acquired, token);
    }

    void meter(const std::exception_ptr& error, bool acquired) {
        const Meter& m = request_.meter;
        if (!m.telemetry) return;
        if (waiting_) m.telemetry->waiting(m.kind, -1);
        const auto outcome = error ? Telemetry::Outcome::failed
                             : acquired ? Telemetry::Outcome::acquired
                                        : Telemetry::Outcome::gave_up;
        m.telemetry->acquire_ended(m.kind, m.name, outcome, Clock::now() - started_);
    }

    Transport& transport_;
    AcquireRequest request_;
    AcquireHandler done_;
    const Clock::time_point started_;
    bool waiting_ = false;  // counted among the waiters
    std::optional<asio::steady_timer> timer_;
    std::optional<std::stop_callback<std::function<void()>>> cancel_;
    std::exception_ptr refusal_;  // the server refused the channel while an attempt was in flight
    bool cancelled_ = false;      // stop requested while an attempt was in flight
    bool attempting_ = false;
    bool woken_ = false;
    bool consumed_wake_ = false;  // used a wake-up since the last attempt began
    bool wake_led_here_ = false;  // the attempt in flight was started by a wake-up
    bool passing_on_ = false;     // declines wake-ups while handing one on
    long long backoff_ = 0;
    bool subscribed_ = false;
    bool finished_ = false;
};

}  // namespace

void acquire(Transport& transport, AcquireRequest request, AcquireHandler done) {
    // The first attempt is sent from the caller's thread: Connection::submit is
    // thread-safe and orders the operation's writes before the loop sees the reply.
    std::make_shared<AcquireOperation>(transport, std::move(request), std::move(done))->start();
}

}  // namespace holdfast::detail
