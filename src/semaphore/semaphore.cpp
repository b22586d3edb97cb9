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

// A count's time to live: Redis stores no expiry of 0 or below, nor one
// past max_duration.
void check_ttl(std::string_view noun, const std::string& name, std::chrono::milliseconds ttl) {
    if (ttl <= std::chrono::milliseconds::zero() || ttl > max_duration)
        throw std::invalid_argument("holdfast: " + std::string(noun) + " '" + name +
                                    "': ttl must be > 0 ms and at most " + std::to_string(max_duration.count()) +
                                    " ms, got " + std::to_string(ttl.count()) + " ms");
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
        const std::string channel = detail::semaphore_channel(name);
        detail::eval_reporting(
            core.transport, scripts::semaphore_acquire, {name},
            {count, std::string(core.transport.publish_command(name, channel)), channel}, name,
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

void Semaphore::start_release(std::int64_t delta, bool if_exists, std::string what, Completion<bool> done) {
    if (delta == 0) return done(nullptr, !if_exists);  // nothing to add; release_if_exists() says so
    auto& core = detail::core_of(*client_);
    const std::string channel = detail::semaphore_channel(name_);
    std::vector<std::string> args{std::to_string(delta), std::string(core.transport.publish_command(name_, channel)),
                                  channel};
    if (if_exists) args.emplace_back("existing");
    const std::string_view key = name_;
    detail::eval_reporting(
        core.transport, scripts::semaphore_release, std::span(&key, 1), detail::views_of(args), name_, std::move(what),
        [&core, name = name_, done = std::move(done), delta](detail::Failure error, Reply reply) {
            if (error) return done(explain_overflow(error, delta), false);
            if (reply.is_nil()) return done(nullptr, false);  // no count, and told to add only to one
            detail::confirm_write(core, name, [done] { done(nullptr, true); });
        },
        noun_);
}

void Semaphore::async_try_set_permits(std::int64_t permits, std::optional<Duration> ttl, Completion<bool> done) {
    check_permits(noun_, name_, permits);
    if (ttl) check_ttl(noun_, name_, *ttl);
    auto& core = detail::core_of(*client_);
    const std::string channel = detail::semaphore_channel(name_);
    detail::eval_reporting(core.transport, scripts::semaphore_try_set_permits, {name_},
                           {std::to_string(permits), std::string(core.transport.publish_command(name_, channel)),
                            channel, std::to_string(ttl ? ttl->count() : 0)},
                           name_, "set permits of " + std::string(noun_),
                           [done = detail::contained(core, noun_, name_, std::move(done))](detail::Failure error,
                                                                                           Reply reply) {
                               done(std::move(error), !error && reply.integer == 1);
                           },
                           noun_);
}

bool Semaphore::try_set_permits(std::int64_t permits) {
    return detail::block<bool>(detail::core_of(*client_).transport, [&](Completion<bool> done) {
        async_try_set_permits(permits, std::nullopt, std::move(done));
    });
}

bool Semaphore::try_set_permits_ms(std::int64_t permits, Duration ttl) {
    return detail::block<bool>(detail::core_of(*client_).transport,
                               [&](Completion<bool> done) { async_try_set_permits(permits, ttl, std::move(done)); });
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
    detail::block<bool>(detail::core_of(*client_).transport,
                        [&](Completion<bool> done) { release_counted(permits, false, std::move(done)); });
}

bool Semaphore::release_if_exists(std::int64_t permits) {
    return detail::block<bool>(detail::core_of(*client_).transport,
                               [&](Completion<bool> done) { release_counted(permits, true, std::move(done)); });
}

void Semaphore::add_permits(std::int64_t delta) {
    detail::block<bool>(detail::core_of(*client_).transport, [&](Completion<bool> done) {
        async_add_permits(delta, [done = std::move(done)](std::exception_ptr error) { done(std::move(error), true); });
    });
}

std::int64_t Semaphore::drain_permits() {
    return detail::block<std::int64_t>(detail::core_of(*client_).transport,
                                       [&](Completion<std::int64_t> done) { async_drain_permits(std::move(done)); });
}

std::int64_t Semaphore::available_permits() const {
    return detail::block<std::int64_t>(detail::core_of(*client_).transport,
                                       [&](Completion<std::int64_t> done) { async_available_permits(std::move(done)); });
}

void Semaphore::async_add_permits(std::int64_t delta, Completion<> done) {
    start_release(delta, false, "add permits to " + std::string(noun_),
                  [done = detail::contained(detail::core_of(*client_), noun_, name_, std::move(done))](
                      std::exception_ptr error, bool) { done(std::move(error)); });
}

void Semaphore::async_drain_permits(Completion<std::int64_t> done) {
    auto& core = detail::core_of(*client_);
    detail::eval_reporting(core.transport, scripts::semaphore_drain_permits, {name_}, {}, name_,
                           "drain " + std::string(noun_),
                           [done = detail::contained(core, noun_, name_, std::move(done))](detail::Failure error,
                                                                                           Reply reply) {
                               done(std::move(error), error ? 0 : reply.integer);
                           },
                           noun_);
}

void Semaphore::async_available_permits(Completion<std::int64_t> done) const {
    auto& core = detail::core_of(*client_);
    detail::ask_count(core.transport, name_, "query " + std::string(noun_), noun_,
                      detail::contained(core, noun_, name_, std::move(done)));
}

void Semaphore::async_try_acquire(std::int64_t permits, Duration wait, std::stop_token stop, Completion<bool> done) {
    start_acquire(permits, wait, std::move(stop), detail::contained(detail::core_of(*client_), noun_, name_, std::move(done)));
}

void Semaphore::async_acquire(std::int64_t permits, std::stop_token stop, Completion<bool> done) {
    start_acquire(permits, std::nullopt, std::move(stop),
                  detail::contained(detail::core_of(*client_), noun_, name_, std::move(done)));
}

void Semaphore::async_release(std::int64_t permits, Completion<> done) {
    release_counted(permits, false, [done = std::move(done)](std::exception_ptr error, bool) {
        done(std::move(error));
    });
}

void Semaphore::async_release_if_exists(std::int64_t permits, Completion<bool> done) {
    release_counted(permits, true, std::move(done));
}

void Semaphore::release_counted(std::int64_t permits, bool if_exists, Completion<bool> done) {
    check_permits(noun_, name_, permits);
    start_release(permits, if_exists, "release " + std::string(noun_),
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

std::future<bool> Semaphore::async_release_if_exists(std::int64_t permits) {
    return detail::future_of<bool>([&](Completion<bool> done) { async_release_if_exists(permits, std::move(done)); });
}

std::future<bool> Semaphore::async_try_set_permits(std::int64_t permits, std::optional<Duration> ttl) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_try_set_permits(permits, ttl, std::move(done)); });
}

std::future<void> Semaphore::async_add_permits(std::int64_t delta) {
    return detail::future_of<void>([&](Completion<> done) { async_add_permits(delta, std::move(done)); });
}

std::future<std::int64_t> Semaphore::async_drain_permits() {
    return detail::future_of<std::int64_t>([&](Completion<std::int64_t> done) { async_drain_permits(std::move(done)); });
}

std::future<std::int64_t> Semaphore::async_available_permits() const {
    return detail::future_of<std::int64_t>(
        [&](Completion<std::int64_t> done) { async_available_permits(std::move(done)); });
}

}  // namespace holdfast
