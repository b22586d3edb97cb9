// PermitExpirableSemaphore: taking and releasing permits (expirable_queries.cpp: the rest).
#include "holdfast/permit_expirable_semaphore.hpp"

#include <stdexcept>

#include "hold/contained.hpp"
#include "core/client_core.hpp"
#include "errors/failure.hpp"
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
#include "semaphore/expirable.hpp"
#include "semaphore/permits.hpp"

namespace holdfast {

using detail::Attempt;
using detail::Reply;
using detail::expirable_noun;

namespace {

// Ids travel in one script call: a million is 16 MB of them.
constexpr std::int64_t most_permits = 1'000'000;

void check_permits_at_once(const std::string& name, std::int64_t permits) {
    if (permits < 1 || permits > most_permits)
        throw std::invalid_argument("holdfast: " + std::string(expirable_noun) + " '" + name +
                                    "': permits must be >= 1 and at most " + std::to_string(most_permits) +
                                    " at once, got " + std::to_string(permits));
}

std::string listed(const std::vector<std::string>& permit_ids) {
    std::string list;
    for (const auto& id : permit_ids) list += (list.empty() ? "" : ", ") + id;
    return list;
}

detail::Failure not_held(const std::string& name, const std::vector<std::string>& permit_ids) {
    if (permit_ids.size() == 1)
        return detail::Failure(errc::not_owner, "holdfast: cannot release permit " + permit_ids.front() + " of " +
                                   std::string(expirable_noun) + " '" + name +
                                   "': it is not held (never acquired, released already, or its lease ended)");
    return detail::Failure(errc::not_owner, "holdfast: cannot release permits " + listed(permit_ids) + " of " +
                               std::string(expirable_noun) + " '" + name +
                               "': not every one is held (never acquired, released already, or its lease ended), "
                               "so none was released");
}

// The release script's ARGV: now, the publish command, the channel, the ids' bytes.
std::vector<std::string> release_args(detail::ClientCore& core, const std::string& name,
                                      const std::vector<std::string>& permits) {
    const std::string channel = detail::semaphore_channel(name);
    std::vector<std::string> args{std::to_string(detail::epoch_ms()),
                                  std::string(core.transport.publish_command(name, channel)), channel};
    args.insert(args.end(), permits.begin(), permits.end());
    return args;
}

}  // namespace

PermitExpirableSemaphore::PermitExpirableSemaphore(Client& client, std::string name)
    : counter_(client, std::move(name), expirable_noun), timeouts_(detail::expirable_permits_key(counter_.name())) {
    detail::check_one_slot(client.config(), expirable_noun, counter_.name(), {counter_.name(), timeouts_});
}

void PermitExpirableSemaphore::start_acquire(std::int64_t permits, std::optional<Duration> wait,
                                             std::optional<Duration> lease, std::stop_token stop, Taken done) {
    const std::string& name = counter_.name();
    check_permits_at_once(name, permits);
    detail::check_permit_lease(name, lease);
    if (wait) detail::check_wait([&] { return std::string(expirable_noun) + ' ' + detail::quoted(name); }, *wait);
    auto& core = detail::core_of(*counter_.client_);
    std::vector<std::string> ids;
    for (std::int64_t i = 0; i < permits; ++i) ids.push_back(detail::new_permit());
    detail::AcquireRequest request;
    request.channel = detail::semaphore_channel(name);
    request.wakes = detail::semaphore_wakes;
    request.attempt = [&core, timeouts = timeouts_, ids, lease](const detail::HoldId& hold, auto report) {
        const std::string& name = hold.key;
        const std::string channel = detail::semaphore_channel(name);
        const std::int64_t now = detail::epoch_ms();
        std::vector<std::string> args{std::to_string(now), std::string(core.transport.publish_command(name, channel)),
                                      channel, std::to_string(detail::permit_never_expires),
                                      detail::lease_end(now, lease)};
        args.insert(args.end(), ids.begin(), ids.end());
        const std::string_view keys[] = {name, timeouts};
        detail::eval_reporting(
            core.transport, scripts::semaphore_expirable_acquire, keys, detail::views_of(args), name,
            "acquire " + std::string(expirable_noun),
            [report = std::move(report)](detail::Failure error, Reply reply) {
                if (error) return report(Attempt::failed(std::move(error)));
                if (reply.is_nil()) return report(Attempt::acquired());
                report(Attempt::refused(reply.integer));  // until the nearest lease ends, or -1
            },
            expirable_noun);
    };
    request.deadline = detail::deadline_after(wait);
    request.stop = std::move(stop);
    // The permits an attempt took that the caller will not be told of (a stop
    // landed, replicas did not confirm them, no reply came) go back by their ids.
    request.give_back = [&core, timeouts = timeouts_, ids](const detail::HoldId& hold, std::function<void()> then) {
        const std::vector<std::string> args = release_args(core, hold.key, ids);
        const std::string_view keys[] = {hold.key, timeouts};
        core.transport.eval(scripts::semaphore_expirable_release, keys, detail::views_of(args),
                            [then = std::move(then)](detail::Failure, Reply) { then(); });
    };
    detail::AcquireSpec spec;
    spec.hold = {expirable_noun, name, {}, {}};
    spec.request = std::move(request);
    spec.gives_back_unknown = true;
    spec.taken = (permits == 1 ? "a permit" : std::to_string(permits) + " permits") + " of " + spec.hold.subject();
    std::vector<std::string> hex;
    for (const auto& id : ids) hex.push_back(detail::permit_hex(id));
    detail::acquire_hold(core, std::move(spec),
                         [done = std::move(done), hex = std::move(hex)](detail::Failure error, bool acquired,
                                                                        std::int64_t) {
                             done(std::move(error), acquired ? hex : std::vector<std::string>());
                         });
}

void PermitExpirableSemaphore::start_release(const std::vector<std::string>& permit_ids, Completion<bool> done) {
    const std::string& name = counter_.name();
    std::vector<std::string> permits = detail::permit_bytes(expirable_noun, name, permit_ids);
    auto& core = detail::core_of(*counter_.client_);
    detail::ReleaseSpec spec;
    spec.hold = {expirable_noun, name, listed(permit_ids), {}};
    spec.ledger = false;  // the caller's permit ids are its word
    spec.send = [&core, name, timeouts = timeouts_, permits = std::move(permits)](
                    const detail::HoldId&, const std::string&, detail::ReplyHandler sent) {
        const std::vector<std::string> args = release_args(core, name, permits);
        const std::string_view keys[] = {name, timeouts};
        detail::eval_reporting(core.transport, scripts::semaphore_expirable_release, keys, detail::views_of(args),
                               name, "release " + std::string(expirable_noun), std::move(sent), expirable_noun);
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

std::optional<std::string> PermitExpirableSemaphore::acquire_one(std::optional<Duration> wait,
                                                                 std::optional<Duration> lease, std::stop_token stop) {
    std::vector<std::string> ids = acquire_many(1, wait, lease, std::move(stop));
    if (ids.empty()) return std::nullopt;
    return std::move(ids.front());
}

std::vector<std::string> PermitExpirableSemaphore::acquire_many(std::int64_t permits, std::optional<Duration> wait,
                                                                std::optional<Duration> lease, std::stop_token stop) {
    return detail::block<std::vector<std::string>>(detail::core_of(*counter_.client_).transport, [&](Taken done) {
        start_acquire(permits, wait, lease, std::move(stop), std::move(done));
    });
}

std::string PermitExpirableSemaphore::acquire() { return *acquire_one(std::nullopt, std::nullopt, {}); }

std::optional<std::string> PermitExpirableSemaphore::acquire(std::stop_token stop) {
    return acquire_one(std::nullopt, std::nullopt, std::move(stop));
}

std::optional<std::string> PermitExpirableSemaphore::try_acquire() {
    return acquire_one(Duration::zero(), std::nullopt, {});
}

bool PermitExpirableSemaphore::try_release(const std::string& permit_id) {
    return try_release(std::vector<std::string>{permit_id});
}

bool PermitExpirableSemaphore::try_release(const std::vector<std::string>& permit_ids) {
    return detail::block<bool>(detail::core_of(*counter_.client_).transport,
                               [&](Completion<bool> done) { start_release(permit_ids, std::move(done)); });
}

void PermitExpirableSemaphore::release(const std::string& permit_id) {
    release(std::vector<std::string>{permit_id});
}

void PermitExpirableSemaphore::release(const std::vector<std::string>& permit_ids) {
    if (!try_release(permit_ids)) not_held(name(), permit_ids).raise();
}

void PermitExpirableSemaphore::async_try_acquire(Duration wait, std::optional<Duration> lease, std::stop_token stop,
                                                 Completion<std::optional<std::string>> done) {
    async_try_acquire(1, wait, lease, std::move(stop), detail::first_permit(std::move(done)));
}

void PermitExpirableSemaphore::async_acquire(std::optional<Duration> lease, std::stop_token stop,
                                             Completion<std::optional<std::string>> done) {
    async_acquire(1, lease, std::move(stop), detail::first_permit(std::move(done)));
}

void PermitExpirableSemaphore::async_try_acquire(std::int64_t permits, Duration wait, std::optional<Duration> lease,
                                                 std::stop_token stop, Taken done) {
    start_acquire(permits, wait, lease, std::move(stop),
                  detail::contained(detail::core_of(*counter_.client_), expirable_noun, name(), std::move(done)));
}

void PermitExpirableSemaphore::async_acquire(std::int64_t permits, std::optional<Duration> lease,
                                             std::stop_token stop, Taken done) {
    start_acquire(permits, std::nullopt, lease, std::move(stop),
                  detail::contained(detail::core_of(*counter_.client_), expirable_noun, name(), std::move(done)));
}

void PermitExpirableSemaphore::async_try_release(std::string permit_id, Completion<bool> done) {
    async_try_release(std::vector<std::string>{std::move(permit_id)}, std::move(done));
}

void PermitExpirableSemaphore::async_try_release(std::vector<std::string> permit_ids, Completion<bool> done) {
    start_release(permit_ids,
                  detail::contained(detail::core_of(*counter_.client_), expirable_noun, name(), std::move(done)));
}

void PermitExpirableSemaphore::async_release(std::string permit_id, Completion<> done) {
    async_release(std::vector<std::string>{std::move(permit_id)}, std::move(done));
}

void PermitExpirableSemaphore::async_release(std::vector<std::string> permit_ids, Completion<> done) {
    done = detail::contained(detail::core_of(*counter_.client_), expirable_noun, name(), std::move(done));
    start_release(permit_ids, [done = std::move(done), permit_ids, name = name()](std::exception_ptr error,
                                                                                    bool released) {
        if (!error && !released) error = not_held(name, permit_ids);
        done(std::move(error));
    });
}

}  // namespace holdfast
