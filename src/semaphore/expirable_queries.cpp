// PermitExpirableSemaphore: its counts, its leases, and the future forms.
#include "holdfast/permit_expirable_semaphore.hpp"

#include <stdexcept>

#include "hold/contained.hpp"
#include "holdfast/errors.hpp"
#include "core/client_core.hpp"
#include "holdfast_scripts.hpp"
#include "hold/hold.hpp"
#include "primitive/call.hpp"
#include "primitive/count.hpp"
#include "primitive/script_call.hpp"
#include "semaphore/channel.hpp"
#include "semaphore/expirable.hpp"
#include "semaphore/permits.hpp"

namespace holdfast {

using detail::Reply;
using detail::expirable_noun;

// The acquire script without ids returns the ended leases and counts.
void PermitExpirableSemaphore::ask_counts(
    std::function<void(std::exception_ptr, std::int64_t free, std::int64_t taken)> done) const {
    const std::string& name = counter_.name();
    auto& core = detail::core_of(*counter_.client_);
    const std::string channel = detail::semaphore_channel(name);
    detail::eval_reporting(core.transport, scripts::semaphore_expirable_acquire, {name, timeouts_},
                           {std::to_string(detail::epoch_ms()), core.transport.publish_command(name, channel), channel,
                            std::to_string(detail::permit_never_expires)},
                           name, "query " + std::string(expirable_noun),
                           [done = std::move(done)](detail::Failure error, Reply reply) {
                               if (!error && (!reply.is_array() || reply.elements.size() != 2))
                                   error = {errc::server_error, "holdfast: unexpected reply to a count of " +
                                                                    std::string(expirable_noun) + ": " +
                                                                    reply.describe()};
                               if (error) return done(std::move(error), 0, 0);
                               done(nullptr, reply.elements[0].integer, reply.elements[1].integer);
                           },
                           expirable_noun);
}

void PermitExpirableSemaphore::async_available_permits(Completion<std::int64_t> done) const {
    ask_counts([done = detail::contained(detail::core_of(*counter_.client_), expirable_noun, name(), std::move(done))](
                   std::exception_ptr error, std::int64_t free, std::int64_t) { done(std::move(error), free); });
}

void PermitExpirableSemaphore::async_acquired_permits(Completion<std::int64_t> done) const {
    ask_counts([done = detail::contained(detail::core_of(*counter_.client_), expirable_noun, name(), std::move(done))](
                   std::exception_ptr error, std::int64_t, std::int64_t taken) { done(std::move(error), taken); });
}

void PermitExpirableSemaphore::async_permits(Completion<std::int64_t> done) const {
    ask_counts([done = detail::contained(detail::core_of(*counter_.client_), expirable_noun, name(), std::move(done))](
                   std::exception_ptr error, std::int64_t free, std::int64_t taken) {
        done(std::move(error), free + taken);
    });
}

void PermitExpirableSemaphore::async_set_permits(std::int64_t permits, Completion<> done) {
    const std::string& name = counter_.name();
    if (permits < 0)
        throw std::invalid_argument("holdfast: " + std::string(expirable_noun) + " '" + name +
                                    "': permits must be >= 0, got " + std::to_string(permits));
    auto& core = detail::core_of(*counter_.client_);
    const std::string channel = detail::semaphore_channel(name);
    detail::eval_reporting(core.transport, scripts::semaphore_expirable_set_permits, {name, timeouts_},
                           {std::to_string(permits), core.transport.publish_command(name, channel), channel}, name,
                           "set permits of " + std::string(expirable_noun),
                           [&core, name, done = detail::contained(core, expirable_noun, name, std::move(done))](
                               detail::Failure error, Reply) {
                               if (error) return done(std::move(error));
                               detail::confirm_write(core, name, [done] { done(nullptr); });
                           },
                           expirable_noun);
}

void PermitExpirableSemaphore::async_update_lease(std::string permit_id, Duration lease, Completion<bool> done) {
    const std::string& name = counter_.name();
    detail::check_permit_lease(name, lease);
    const std::string permit = detail::permit_bytes(expirable_noun, name, {permit_id}).front();
    auto& core = detail::core_of(*counter_.client_);
    const std::int64_t now = detail::epoch_ms();
    detail::eval_reporting(core.transport, scripts::semaphore_expirable_update_lease, {name, timeouts_},
                           {std::to_string(now), detail::lease_end(now, lease), permit}, name,
                           "update a lease of " + std::string(expirable_noun),
                           [done = detail::contained(core, expirable_noun, name, std::move(done))](
                               detail::Failure error, Reply reply) { done(std::move(error), !error && reply.integer == 1); },
                           expirable_noun);
}

// A read: a permit whose lease ended is not held, whether or not an acquire
// has returned it yet.
void PermitExpirableSemaphore::async_remaining_ttl(std::string permit_id,
                                                   Completion<std::optional<Duration>> done) const {
    const std::string& name = counter_.name();
    const std::string permit = detail::permit_bytes(expirable_noun, name, {permit_id}).front();
    auto& core = detail::core_of(*counter_.client_);
    detail::ask(core.transport, timeouts_, "query a lease of " + std::string(expirable_noun),
                {"ZSCORE", timeouts_, permit},
                [done = detail::contained(core, expirable_noun, name, std::move(done))](detail::Failure error,
                                                                                       Reply reply) {
                    if (error || reply.is_nil()) return done(std::move(error), std::nullopt);
                    const auto end = static_cast<std::int64_t>(std::stod(reply.str));
                    if (end >= detail::permit_never_expires) return done(nullptr, Duration::max());
                    const std::int64_t left = end - detail::epoch_ms();
                    done(nullptr, left > 0 ? std::optional(Duration(left)) : std::nullopt);
                },
                expirable_noun);
}

void PermitExpirableSemaphore::async_try_set_permits(std::int64_t permits, std::optional<Duration> ttl,
                                                     Completion<bool> done) {
    counter_.async_try_set_permits(permits, ttl, std::move(done));
}

void PermitExpirableSemaphore::async_add_permits(std::int64_t delta, Completion<> done) {
    counter_.async_add_permits(delta, std::move(done));
}

// The blocking forms, over the callback forms.

void PermitExpirableSemaphore::set_permits(std::int64_t permits) {
    detail::block<bool>(detail::core_of(*counter_.client_).transport, [&](Completion<bool> done) {
        async_set_permits(permits, [done = std::move(done)](std::exception_ptr error) { done(std::move(error), true); });
    });
}

std::int64_t PermitExpirableSemaphore::available_permits() const {
    return detail::block<std::int64_t>(detail::core_of(*counter_.client_).transport,
                                       [&](Completion<std::int64_t> done) { async_available_permits(std::move(done)); });
}

std::int64_t PermitExpirableSemaphore::acquired_permits() const {
    return detail::block<std::int64_t>(detail::core_of(*counter_.client_).transport,
                                       [&](Completion<std::int64_t> done) { async_acquired_permits(std::move(done)); });
}

std::int64_t PermitExpirableSemaphore::permits() const {
    return detail::block<std::int64_t>(detail::core_of(*counter_.client_).transport,
                                       [&](Completion<std::int64_t> done) { async_permits(std::move(done)); });
}

bool PermitExpirableSemaphore::update_lease_ms(const std::string& permit_id, Duration lease) {
    return detail::block<bool>(detail::core_of(*counter_.client_).transport,
                               [&](Completion<bool> done) { async_update_lease(permit_id, lease, std::move(done)); });
}

std::optional<PermitExpirableSemaphore::Duration> PermitExpirableSemaphore::remaining_ttl(
    const std::string& permit_id) const {
    return detail::block<std::optional<Duration>>(
        detail::core_of(*counter_.client_).transport,
        [&](Completion<std::optional<Duration>> done) { async_remaining_ttl(permit_id, std::move(done)); });
}

// The future forms, over the callback forms.

std::future<std::optional<std::string>> PermitExpirableSemaphore::async_try_acquire(Duration wait,
                                                                                    std::optional<Duration> lease,
                                                                                    std::stop_token stop) {
    return detail::future_of<std::optional<std::string>>([&](Completion<std::optional<std::string>> done) {
        async_try_acquire(wait, lease, std::move(stop), std::move(done));
    });
}

std::future<std::optional<std::string>> PermitExpirableSemaphore::async_acquire(std::optional<Duration> lease,
                                                                                std::stop_token stop) {
    return detail::future_of<std::optional<std::string>>(
        [&](Completion<std::optional<std::string>> done) { async_acquire(lease, std::move(stop), std::move(done)); });
}

std::future<std::vector<std::string>> PermitExpirableSemaphore::async_try_acquire(std::int64_t permits, Duration wait,
                                                                                  std::optional<Duration> lease,
                                                                                  std::stop_token stop) {
    return detail::future_of<std::vector<std::string>>([&](Taken done) {
        async_try_acquire(permits, wait, lease, std::move(stop), std::move(done));
    });
}

std::future<std::vector<std::string>> PermitExpirableSemaphore::async_acquire(std::int64_t permits,
                                                                              std::optional<Duration> lease,
                                                                              std::stop_token stop) {
    return detail::future_of<std::vector<std::string>>(
        [&](Taken done) { async_acquire(permits, lease, std::move(stop), std::move(done)); });
}

std::future<void> PermitExpirableSemaphore::async_release(std::string permit_id) {
    return detail::future_of<void>([&](Completion<> done) { async_release(std::move(permit_id), std::move(done)); });
}

std::future<void> PermitExpirableSemaphore::async_release(std::vector<std::string> permit_ids) {
    return detail::future_of<void>([&](Completion<> done) { async_release(std::move(permit_ids), std::move(done)); });
}

std::future<bool> PermitExpirableSemaphore::async_try_release(std::string permit_id) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_try_release(std::move(permit_id), std::move(done)); });
}

std::future<bool> PermitExpirableSemaphore::async_try_release(std::vector<std::string> permit_ids) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_try_release(std::move(permit_ids), std::move(done)); });
}

std::future<bool> PermitExpirableSemaphore::async_update_lease(std::string permit_id, Duration lease) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_update_lease(std::move(permit_id), lease, std::move(done)); });
}

std::future<std::optional<PermitExpirableSemaphore::Duration>> PermitExpirableSemaphore::async_remaining_ttl(
    std::string permit_id) const {
    return detail::future_of<std::optional<Duration>>(
        [&](Completion<std::optional<Duration>> done) { async_remaining_ttl(std::move(permit_id), std::move(done)); });
}

std::future<bool> PermitExpirableSemaphore::async_try_set_permits(std::int64_t permits, std::optional<Duration> ttl) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_try_set_permits(permits, ttl, std::move(done)); });
}

std::future<void> PermitExpirableSemaphore::async_set_permits(std::int64_t permits) {
    return detail::future_of<void>([&](Completion<> done) { async_set_permits(permits, std::move(done)); });
}

std::future<void> PermitExpirableSemaphore::async_add_permits(std::int64_t delta) {
    return detail::future_of<void>([&](Completion<> done) { async_add_permits(delta, std::move(done)); });
}

std::future<std::int64_t> PermitExpirableSemaphore::async_available_permits() const {
    return detail::future_of<std::int64_t>(
        [&](Completion<std::int64_t> done) { async_available_permits(std::move(done)); });
}

std::future<std::int64_t> PermitExpirableSemaphore::async_acquired_permits() const {
    return detail::future_of<std::int64_t>(
        [&](Completion<std::int64_t> done) { async_acquired_permits(std::move(done)); });
}

std::future<std::int64_t> PermitExpirableSemaphore::async_permits() const {
    return detail::future_of<std::int64_t>([&](Completion<std::int64_t> done) { async_permits(std::move(done)); });
}

}  // namespace holdfast
