#include "holdfast/permit_expirable_semaphore.hpp"

#include <random>
#include <stdexcept>

#include "hold/contained.hpp"
#include "core/client_core.hpp"
#include "holdfast/errors.hpp"
#include "holdfast_scripts.hpp"
#include "primitive/script_call.hpp"
#include "hold/hold.hpp"
#include "common/quoted.hpp"
#include "primitive/arguments.hpp"
#include "primitive/call.hpp"
#include "primitive/names.hpp"
#include "primitive/one_slot.hpp"
#include "semaphore/channel.hpp"
#include "semaphore/permits.hpp"

namespace holdfast {

using detail::Attempt;
using detail::Reply;

namespace {

constexpr std::string_view noun = "permit-expirable semaphore";
constexpr std::int64_t never = detail::permit_never_expires;
constexpr std::size_t id_bytes = 16;

std::int64_t epoch_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The score a permit taken now keeps until: now + lease, or never.
std::string lease_end(std::int64_t now, std::optional<std::chrono::milliseconds> lease) {
    if (!lease || lease->count() >= never - now) return std::to_string(never);
    return std::to_string(now + lease->count());
}

// 16 random bytes, as Redisson's ServiceManager.generateId().
std::string new_permit() {
    static thread_local std::mt19937_64 random{(static_cast<std::uint64_t>(std::random_device{}()) << 32) ^
                                               std::random_device{}()};
    std::string bytes(id_bytes, '\0');
    for (std::size_t i = 0; i < id_bytes; i += 8) {
        std::uint64_t word = random();
        for (std::size_t j = 0; j < 8; ++j, word >>= 8) bytes[i + j] = static_cast<char>(word & 0xff);
    }
    return bytes;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// The bytes a permit id names; std::invalid_argument for anything but 32 hex digits.
std::string permit_bytes(const std::string& name, const std::string& permit_id) {
    std::string bytes;
    if (permit_id.size() == id_bytes * 2) {
        for (std::size_t i = 0; i < permit_id.size(); i += 2) {
            const int high = hex_value(permit_id[i]), low = hex_value(permit_id[i + 1]);
            if (high < 0 || low < 0) break;
            bytes += static_cast<char>(high << 4 | low);
        }
    }
    if (bytes.size() != id_bytes)
        throw std::invalid_argument("holdfast: " + std::string(noun) + " '" + name + "': permit_id must be " +
                                    std::to_string(id_bytes * 2) + " hex digits, as acquire() returns, got '" +
                                    permit_id + "'");
    return bytes;
}

NotOwnerError not_held(const std::string& name, const std::string& permit_id) {
    return NotOwnerError("holdfast: cannot release permit " + permit_id + " of " + std::string(noun) + " '" + name +
                         "': it is not held (never acquired, released already, or its lease ended)");
}

// A lease end past max_duration would overflow the epoch-ms arithmetic.
void check_lease(const std::string& name, std::optional<std::chrono::milliseconds> lease) {
    detail::check_lease([&] { return std::string(noun) + ' ' + detail::quoted(name); }, lease,
                        "acquire without a lease for a permit that never expires");
}

}  // namespace

PermitExpirableSemaphore::PermitExpirableSemaphore(Client& client, std::string name)
    : counter_(client, std::move(name), noun), timeouts_(detail::expirable_permits_key(counter_.name())) {
    detail::check_one_slot(client.config(), noun, counter_.name(), {counter_.name(), timeouts_});
}

void PermitExpirableSemaphore::start_acquire(std::optional<Duration> wait, std::optional<Duration> lease,
                                             std::stop_token stop, Done done) {
    const std::string& name = counter_.name();
    check_lease(name, lease);
    if (wait) detail::check_wait([&] { return std::string(noun) + ' ' + detail::quoted(name); }, *wait);
    auto& core = detail::core_of(*counter_.client_);
    detail::AcquireRequest request;
    request.channel = detail::semaphore_channel(name);
    request.wakes = detail::semaphore_wakes;
    std::string permit = new_permit();
    request.attempt = [&core, timeouts = timeouts_, channel = request.channel, permit,
                       lease](const detail::HoldId& hold, auto report) {
        const std::string& name = hold.key;
        const std::int64_t now = epoch_ms();
        detail::eval_reporting(
            core.transport, scripts::semaphore_expirable_acquire, {name, timeouts},
            {std::to_string(now), std::string(core.transport.publish_command(name, detail::semaphore_channel(name))), channel, std::to_string(never),
             lease_end(now, lease), permit},
            name, "acquire " + std::string(noun),
            [report = std::move(report)](detail::Failure error, Reply reply) {
                if (error) return report(Attempt::failed(std::move(error)));
                if (reply.is_nil()) return report(Attempt::acquired());
                report(Attempt::refused(reply.integer));  // until the nearest lease ends, or -1
            },
            noun);
    };
    request.deadline = detail::deadline_after(wait);
    request.stop = std::move(stop);
    // The permit an attempt took that the caller will not be told of (a stop
    // landed, replicas did not confirm it, no reply came) goes back by its id.
    request.give_back = [&core, timeouts = timeouts_, channel = request.channel,
                         permit](const detail::HoldId& hold, std::function<void()> then) {
        const std::string& name = hold.key;
        core.transport.eval(scripts::semaphore_expirable_release, {name, timeouts},
                            {std::to_string(epoch_ms()), std::string(core.transport.publish_command(name, detail::semaphore_channel(name))), permit, channel},
                            [then = std::move(then)](detail::Failure, Reply) { then(); });
    };
    detail::AcquireSpec spec;
    spec.hold = {noun, name, {}, {}};
    spec.request = std::move(request);
    spec.gives_back_unknown = true;
    spec.taken = "a permit of " + spec.hold.subject();
    detail::acquire_hold(core, std::move(spec),
                         [done = std::move(done), id = detail::permit_hex(permit)](detail::Failure error,
                                                                                   bool acquired, std::int64_t) {
                             done(std::move(error), acquired ? std::optional(id) : std::nullopt);
                         });
}

void PermitExpirableSemaphore::start_release(const std::string& permit_id,
                                             std::function<void(std::exception_ptr, bool)> done) {
    const std::string& name = counter_.name();
    std::string permit = permit_bytes(name, permit_id);
    auto& core = detail::core_of(*counter_.client_);
    detail::ReleaseSpec spec;
    spec.hold = {noun, name, permit_id, {}};
    spec.ledger = false;  // the caller's permit id is its word
    spec.send = [&core, name, timeouts = timeouts_, permit = std::move(permit)](
                    const detail::HoldId&, const std::string&, detail::ReplyHandler sent) {
        detail::eval_reporting(core.transport, scripts::semaphore_expirable_release, {name, timeouts},
                               {std::to_string(epoch_ms()), std::string(core.transport.publish_command(name, detail::semaphore_channel(name))), permit,
                                detail::semaphore_channel(name)},
                               name, "release " + std::string(noun), std::move(sent), noun);
    };
    spec.decode = [](const Reply& reply) {
        return reply.integer == 1 ? detail::ReleaseReply::released : detail::ReleaseReply::not_held;
    };
    detail::release_hold(core, std::move(spec), [done = std::move(done)](detail::ReleaseOutcome outcome) {
        // Not held is try_release()'s false, and release()'s own error.
        if (outcome.verdict == detail::ReleaseVerdict::not_held) return done(nullptr, false);
        done(std::move(outcome.error), !outcome.error);
    });
}

std::string PermitExpirableSemaphore::acquire(std::optional<Duration> lease) { return *acquire(lease, {}); }

std::optional<std::string> PermitExpirableSemaphore::acquire(std::optional<Duration> lease, std::stop_token stop) {
    return detail::block<std::optional<std::string>>(detail::core_of(*counter_.client_).transport, [&](auto done) {
        start_acquire(std::nullopt, lease, std::move(stop), std::move(done));
    });
}

std::optional<std::string> PermitExpirableSemaphore::try_acquire(std::optional<Duration> lease) {
    return try_acquire_ms(Duration::zero(), lease, {});
}

std::optional<std::string> PermitExpirableSemaphore::try_acquire_ms(Duration wait, std::optional<Duration> lease,
                                                                    std::stop_token stop) {
    return detail::block<std::optional<std::string>>(
        detail::core_of(*counter_.client_).transport, [&](auto done) { start_acquire(wait, lease, std::move(stop), std::move(done)); });
}

bool PermitExpirableSemaphore::try_release(const std::string& permit_id) {
    return detail::block<bool>(detail::core_of(*counter_.client_).transport,
                               [&](auto done) { start_release(permit_id, std::move(done)); });
}

void PermitExpirableSemaphore::release(const std::string& permit_id) {
    if (!try_release(permit_id)) throw not_held(name(), permit_id);
}

bool PermitExpirableSemaphore::update_lease(const std::string& permit_id, Duration lease) {
    const std::string& name = counter_.name();
    check_lease(name, lease);
    std::string permit = permit_bytes(name, permit_id);
    auto& core = detail::core_of(*counter_.client_);
    const std::int64_t now = epoch_ms();
    Reply reply = detail::block<Reply>(core.transport, [&](auto done) {
        detail::eval_reporting(core.transport, scripts::semaphore_expirable_update_lease, {name, timeouts_},
                               {std::to_string(now), lease_end(now, lease), std::move(permit)}, name,
                               "update a lease of " + std::string(noun), std::move(done), noun);
    });
    return reply.integer == 1;
}

std::int64_t PermitExpirableSemaphore::available_permits() const {
    const std::string& name = counter_.name();
    auto& core = detail::core_of(*counter_.client_);
    Reply reply = detail::block<Reply>(core.transport, [&](auto done) {
        detail::eval_reporting(core.transport, scripts::semaphore_expirable_acquire, {name, timeouts_},
                               {std::to_string(epoch_ms()), std::string(core.transport.publish_command(name, detail::semaphore_channel(name))),
                                detail::semaphore_channel(name), std::to_string(never)},
                               name, "query " + std::string(noun), std::move(done), noun);
    });
    return reply.integer;
}

void PermitExpirableSemaphore::async_try_acquire(Duration wait, std::optional<Duration> lease, std::stop_token stop,
                                                 Completion<std::optional<std::string>> done) {
    start_acquire(wait, lease, std::move(stop), detail::contained(detail::core_of(*counter_.client_), noun, name(), std::move(done)));
}

void PermitExpirableSemaphore::async_acquire(std::optional<Duration> lease, std::stop_token stop,
                                             Completion<std::optional<std::string>> done) {
    start_acquire(std::nullopt, lease, std::move(stop),
                  detail::contained(detail::core_of(*counter_.client_), noun, name(), std::move(done)));
}

void PermitExpirableSemaphore::async_release(std::string permit_id, Completion<> done) {
    done = detail::contained(detail::core_of(*counter_.client_), noun, name(), std::move(done));
    start_release(permit_id, [done = std::move(done), permit_id, name = name()](std::exception_ptr error, bool released) {
        if (!error && !released) error = std::make_exception_ptr(not_held(name, permit_id));
        done(std::move(error));
    });
}

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

std::future<void> PermitExpirableSemaphore::async_release(std::string permit_id) {
    return detail::future_of<void>([&](Completion<> done) { async_release(std::move(permit_id), std::move(done)); });
}

}  // namespace holdfast
