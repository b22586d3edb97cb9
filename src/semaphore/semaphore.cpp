#include "holdfast/semaphore.hpp"

#include <limits>
#include <stdexcept>
#include <string_view>

#include "hold/contained.hpp"
#include "core/client_core.hpp"
#include "holdfast/errors.hpp"
#include "holdfast_scripts.hpp"
#include "primitive/script_call.hpp"
#include "hold/hold.hpp"
#include "common/quoted.hpp"
#include "primitive/arguments.hpp"
#include "primitive/call.hpp"
#include "primitive/count.hpp"
#include "semaphore/channel.hpp"

namespace holdfast {

using detail::Attempt;
using detail::Reply;

namespace {


void check_permits(std::string_view noun, const std::string& name, std::int64_t permits) {
    if (permits < 0)
        throw std::invalid_argument("holdfast: " + std::string(noun) + " '" + name + "': permits must be >= 0, got " +
                                    std::to_string(permits));
}

// The release script refuses a count past Redis's 64-bit range (OVERFLOW)
// and changes nothing; say so in holdfast's words.
detail::Failure explain_overflow(detail::Failure error, std::int64_t delta) {
    if (!error.is(errc::count_overflow)) return error;
    return error.adding(" (adding " + std::to_string(delta) + " permits would take the count past " +
                        std::to_string(delta > 0 ? std::numeric_limits<std::int64_t>::max()
                                                 : std::numeric_limits<std::int64_t>::min()) +
                        ", the limit of Redis's 64-bit counts; the count was not changed)");
}

}  // namespace

Semaphore::Semaphore(Client& client, std::string name) : Semaphore(client, std::move(name), "semaphore") {}

Semaphore::Semaphore(Client& client, std::string name, std::string_view noun)
    : client_(&client), name_(std::move(name)), noun_(noun) {
    if (name_.empty()) throw std::invalid_argument("holdfast: a " + std::string(noun_) + " name must not be empty");
    name_ = detail::mapped_name(client.config().key_prefix, std::move(name_));
}

void Semaphore::start_acquire(std::int64_t permits, std::optional<Duration> wait, std::stop_token stop, Done done) {
    check_permits(noun_, name_, permits);
    if (wait) detail::check_wait([&] { return std::string(noun_) + ' ' + detail::quoted(name_); }, *wait);
    if (permits == 0) return done(nullptr, true);  // nothing to take (Redisson alike)
    auto& core = detail::core_of(*client_);
    detail::AcquireRequest request;
    request.channel = detail::semaphore_channel(name_);
    request.wakes = detail::semaphore_wakes;
    // A waiter for several permits may be refused while some are free, which
    // a waiter for fewer could use: it passes its wake-up on.
    request.attempt = [&core, noun = noun_, count = std::to_string(permits),
                       pass_on = permits > 1](const detail::HoldId& hold, auto report) {
        const std::string& name = hold.key;
        detail::eval_reporting(
            core.transport, scripts::semaphore_acquire, {name},
            {count, detail::semaphore_channel(name), std::string(core.transport.publish_command(name, detail::semaphore_channel(name)))}, name,
            "acquire " + std::string(noun),
            [report = std::move(report), pass_on](detail::Failure error, Reply reply) {
                if (error) return report(Attempt::failed(std::move(error)));
                report(reply.integer == 1 ? Attempt::acquired() : Attempt::refused(-1, pass_on));
            },
            noun);
    };
    request.deadline = detail::deadline_after(wait);
    request.stop = std::move(stop);
    // Permits taken but not to be reported (a stop landed during the
    // attempt, or replicas did not confirm them) are released.
    request.give_back = [&core, permits](const detail::HoldId& hold, std::function<void()> then) {
        const std::string& name = hold.key;
        core.transport.eval(scripts::semaphore_release, {name},
                            {std::to_string(permits), core.transport.publish_command(name, detail::semaphore_channel(name)), detail::semaphore_channel(name)},
                            [then = std::move(then)](detail::Failure, Reply) { then(); });
    };
    detail::AcquireSpec spec;
    spec.hold = {noun_, name_, {}, {}};
    spec.request = std::move(request);
    spec.taken = std::to_string(permits) + " permit(s) of " + spec.hold.subject();
    detail::acquire_hold(core, std::move(spec),
                         [done = std::move(done)](detail::Failure error, bool acquired, std::int64_t) {
                             done(std::move(error), acquired);
                         });
}

void Semaphore::start_release(std::int64_t delta, std::string what, std::function<void(std::exception_ptr)> done) {
    if (delta == 0) return done(nullptr);
    auto& core = detail::core_of(*client_);
    detail::eval_reporting(
        core.transport, scripts::semaphore_release, {name_},
        {std::to_string(delta), std::string(core.transport.publish_command(name_, detail::semaphore_channel(name_))), detail::semaphore_channel(name_)}, name_,
        std::move(what),
        [&core, name = name_, done = std::move(done), delta](detail::Failure error, Reply) {
            if (error) return done(explain_overflow(error, delta));
            detail::confirm_write(core, name, [done] { done(nullptr); });
        },
        noun_);
}

bool Semaphore::try_set_permits(std::int64_t permits) {
    check_permits(noun_, name_, permits);
    auto& core = detail::core_of(*client_);
    Reply reply = detail::block<Reply>(core.transport, [&](auto done) {
        detail::eval_reporting(core.transport, scripts::semaphore_try_set_permits, {name_},
                               {std::to_string(permits), std::string(core.transport.publish_command(name_, detail::semaphore_channel(name_))),
                                detail::semaphore_channel(name_)},
                               name_,
                               "set permits of " + std::string(noun_), std::move(done), noun_);
    });
    return reply.integer == 1;
}

void Semaphore::acquire(std::int64_t permits) { acquire(permits, {}); }

bool Semaphore::acquire(std::int64_t permits, std::stop_token stop) {
    return detail::block<bool>(detail::core_of(*client_).transport,
                               [&](auto done) { start_acquire(permits, std::nullopt, std::move(stop), std::move(done)); });
}

bool Semaphore::try_acquire(std::int64_t permits) { return try_acquire_ms(permits, Duration::zero(), {}); }

bool Semaphore::try_acquire_ms(std::int64_t permits, Duration wait, std::stop_token stop) {
    return detail::block<bool>(detail::core_of(*client_).transport,
                               [&](auto done) { start_acquire(permits, wait, std::move(stop), std::move(done)); });
}

void Semaphore::release(std::int64_t permits) {
    check_permits(noun_, name_, permits);
    detail::block<bool>(detail::core_of(*client_).transport, [&](auto done) {
        start_release(permits, "release " + std::string(noun_),
                      [done = std::move(done)](std::exception_ptr error) { done(std::move(error), true); });
    });
}

void Semaphore::add_permits(std::int64_t delta) {
    detail::block<bool>(detail::core_of(*client_).transport, [&](auto done) {
        start_release(delta, "add permits to " + std::string(noun_),
                      [done = std::move(done)](std::exception_ptr error) { done(std::move(error), true); });
    });
}

std::int64_t Semaphore::drain_permits() {
    auto& core = detail::core_of(*client_);
    Reply reply = detail::block<Reply>(core.transport, [&](auto done) {
        detail::eval_reporting(core.transport, scripts::semaphore_drain_permits, {name_}, {}, name_,
                               "drain " + std::string(noun_), std::move(done), noun_);
    });
    return reply.integer;
}

std::int64_t Semaphore::available_permits() const {
    auto& transport = detail::core_of(*client_).transport;
    const std::string what = "query " + std::string(noun_);
    return detail::stored_count(transport, detail::query(transport, name_, what, {"GET", name_}, noun_), name_, noun_);
}

void Semaphore::async_try_acquire(std::int64_t permits, Duration wait, std::stop_token stop, Completion<bool> done) {
    start_acquire(permits, wait, std::move(stop), detail::contained(detail::core_of(*client_), noun_, name_, std::move(done)));
}

void Semaphore::async_acquire(std::int64_t permits, std::stop_token stop, Completion<bool> done) {
    start_acquire(permits, std::nullopt, std::move(stop),
                  detail::contained(detail::core_of(*client_), noun_, name_, std::move(done)));
}

void Semaphore::async_release(std::int64_t permits, Completion<> done) {
    check_permits(noun_, name_, permits);
    start_release(permits, "release " + std::string(noun_),
                  detail::contained(detail::core_of(*client_), noun_, name_, std::move(done)));
}

std::future<bool> Semaphore::async_try_acquire(std::int64_t permits, Duration wait, std::stop_token stop) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_try_acquire(permits, wait, std::move(stop), std::move(done)); });
}

std::future<bool> Semaphore::async_acquire(std::int64_t permits, std::stop_token stop) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_acquire(permits, std::move(stop), std::move(done)); });
}

std::future<void> Semaphore::async_release(std::int64_t permits) {
    return detail::future_of<void>([&](Completion<> done) { async_release(permits, std::move(done)); });
}

}  // namespace holdfast
