#include "holdfast/lock.hpp"

#include <stdexcept>

#include "hold/contained.hpp"
#include "core/client_core.hpp"
#include "common/quoted.hpp"
#include "holdfast/errors.hpp"
#include "hold/hold.hpp"
#include "primitive/arguments.hpp"
#include "primitive/blocking.hpp"
#include "primitive/call.hpp"
#include "primitive/names.hpp"
#include "primitive/one_slot.hpp"
#include "lock/access.hpp"
#include "lock/kind.hpp"
#include "primitive/script_call.hpp"

namespace holdfast {

using detail::Attempt;
using detail::Reply;

namespace {

void refuse_loop_thread(detail::ClientCore& core) { detail::refuse_loop_thread(core.transport); }

Reply query(detail::ClientCore& core, const std::string& key, std::string what, std::vector<std::string_view> args) {
    return detail::query(core.transport, key, std::move(what), std::move(args));
}

// The kind's queries read `name` through this.
detail::LockKind::Query reader(detail::ClientCore& core, const std::string& name) {
    return {[&core, &name](std::vector<std::string_view> args) { return query(core, name, "query lock", std::move(args)); },
            core.transport.config().server_name()};
}

// Every lock has a TTL. A refusal without one (PTTL -1) may come from a hash
// that is no lock at all, which a waiter would wait on for ever: it stays a
// refusal only if every hold field holds a hold count.
void refused_without_ttl(detail::ClientCore& core, const detail::LockKind& kind, const std::string& name,
                         std::function<void(Attempt)> report) {
    core.transport.execute(name, {"HGETALL", name}, [&core, &kind, name, report](detail::Failure error, Reply reply) {
        if (error) return report(Attempt::failed(error));
        for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
            const std::string& field = reply.elements[i].str;
            const std::string& value = reply.elements[i + 1].str;
            if (kind.holder_of(field) && !detail::hold_count_in(value))
                return report(
                    Attempt::failed(detail::not_a_lock(core.transport.config().server_name(), name, field, value)));
        }
        report(Attempt::refused(-1));
    });
}

}  // namespace

Lock::Lock(Client& client, std::string name) : Lock(client, std::move(name), detail::reentrant_lock_kind()) {}

Lock::Lock(Client& client, std::string name, const detail::LockKind& kind)
    : client_(&client), name_(std::move(name)), kind_(&kind) {
    if (name_.empty()) throw std::invalid_argument("holdfast: a " + std::string(kind.noun()) + " name must not be empty");
    name_ = detail::mapped_name(client.config().key_prefix, std::move(name_));
    detail::check_one_slot(client.config(), kind.noun(), name_, kind.keys(name_));
}

void Lock::acquire(std::string owner, std::optional<Duration> wait, std::optional<Duration> lease, Acquired done,
                   Watch watch, std::stop_token stop) {
    detail::LockAccess::acquire(
        *this, std::move(owner), wait, lease,
        [done = std::move(done)](detail::Failure error, bool acquired, std::int64_t token) {
            done(error, acquired, token);
        },
        watch, std::move(stop));
}

void Lock::start_release(std::string owner, Released done) {
    detail::LockAccess::release(*this, std::move(owner),
                                [done = std::move(done)](detail::Failure error) { done(error); });
}

}  // namespace holdfast

namespace holdfast::detail {

void LockAccess::acquire(Lock& lock, std::string owner, std::optional<Lock::Duration> wait,
                         std::optional<Lock::Duration> lease, AcquireHandler done, Watch watch, std::stop_token stop) {
    using Duration = Lock::Duration;
    const std::string& name = lock.name_;
    const LockKind* kind = lock.kind_;
    const auto subject = [&name] { return quoted(name); };
    check_owner(subject, owner);
    check_lease(subject, lease);
    if (wait) check_wait(subject, *wait);
    auto& core = lock.client_->core();
    const Duration ttl = lease.value_or(core.watchdog.lease());
    AcquireSpec spec;
    spec.hold = {kind->noun(), name, kind->hold_field(owner), owner};
    spec.request = kind->acquire(core, name, owner, ttl, wait && *wait == Duration::zero());
    spec.request.attempt = [&core, &kind = *kind, name, attempt = std::move(spec.request.attempt)](
                               std::function<void(Attempt)> report) {
        attempt([&core, &kind, name, report = std::move(report)](Attempt result) {
            if (result.outcome != Attempt::Outcome::refused || result.ttl != -1) return report(std::move(result));
            refused_without_ttl(core, kind, name, std::move(report));
        });
    };
    spec.request.deadline = deadline_after(wait);
    spec.request.stop = std::move(stop);
    spec.request.give_back = [&core, kind, name, owner](std::function<void()> then) {
        kind->release(core, name, owner, "0", [then = std::move(then)](Failure, Reply) { then(); });
    };
    // The caller's watch (RedLock) renews and judges its members itself.
    spec.keeping = {true, watch == Watch::watchdog, lease ? nullptr : &kind->renew(), ttl};
    spec.gives_back_unknown = watch == Watch::watchdog;
    acquire_hold(core, std::move(spec), std::move(done));
}

void LockAccess::release(Lock& lock, std::string owner, Released done) {
    const std::string& name = lock.name_;
    const LockKind* kind = lock.kind_;
    check_owner([&name] { return quoted(name); }, owner);
    auto& core = lock.client_->core();
    ReleaseSpec spec;
    spec.hold = {kind->noun(), name, kind->hold_field(owner), owner};
    spec.send = [&core, kind, name, owner](const std::string& lease_ms, ReplyHandler sent) {
        kind->release(core, name, owner, lease_ms, std::move(sent));
    };
    release_hold(core, std::move(spec),
                 [done = std::move(done)](ReleaseOutcome outcome) { done(std::move(outcome.error)); });
}

}  // namespace holdfast::detail

namespace holdfast {

std::optional<std::int64_t> Lock::acquire_blocking(std::optional<Duration> wait, std::optional<Duration> lease,
                                                   std::stop_token stop) {
    refuse_loop_thread(client_->core());
    detail::BlockingResult<std::optional<std::int64_t>> result;
    acquire(
        client_->current_owner(), wait, lease,
        [&result](std::exception_ptr error, bool acquired, std::int64_t token) {
            result.set(std::move(error), acquired ? std::optional(token) : std::nullopt);
        },
        Watch::watchdog, std::move(stop));
    return result.get();
}

void Lock::lock() { acquire_blocking(std::nullopt, std::nullopt); }

void Lock::lock(Duration lease) { acquire_blocking(std::nullopt, lease); }

bool Lock::lock(std::stop_token stop) { return acquire_blocking(std::nullopt, std::nullopt, std::move(stop)).has_value(); }

bool Lock::try_lock() { return acquire_blocking(Duration::zero(), std::nullopt).has_value(); }

bool Lock::try_lock_for_ms(Duration wait, std::optional<Duration> lease, std::stop_token stop) {
    return acquire_blocking(wait, lease, std::move(stop)).has_value();
}

void Lock::unlock() {
    refuse_loop_thread(client_->core());
    detail::BlockingResult<bool> result;
    // Reported by the pipeline already (event, metric, lease-lost token).
    start_release(client_->current_owner(), [&result](std::exception_ptr) { result.set(nullptr, true); });
    result.get();
}

void Lock::release() {
    refuse_loop_thread(client_->core());
    detail::BlockingResult<bool> result;
    start_release(client_->current_owner(), [&result](std::exception_ptr error) { result.set(std::move(error), true); });
    result.get();
}

void Lock::async_try_lock(std::string owner, Duration wait, std::optional<Duration> lease, std::stop_token stop,
                          Completion<bool> done) {
    done = detail::contained(client_->core(), kind_->noun(), name_, std::move(done));
    acquire(
        std::move(owner), wait, lease,
        [done = std::move(done)](std::exception_ptr error, bool acquired, std::int64_t) { done(error, acquired); },
        Watch::watchdog, std::move(stop));
}

void Lock::async_lock(std::string owner, std::optional<Duration> lease, std::stop_token stop, Completion<bool> done) {
    done = detail::contained(client_->core(), kind_->noun(), name_, std::move(done));
    acquire(
        std::move(owner), std::nullopt, lease,
        [done = std::move(done)](std::exception_ptr error, bool acquired, std::int64_t) { done(error, acquired); },
        Watch::watchdog, std::move(stop));
}

void Lock::async_unlock(std::string owner, Completion<> done) {
    start_release(std::move(owner), detail::contained(client_->core(), kind_->noun(), name_, std::move(done)));
}

std::future<bool> Lock::async_try_lock(std::string owner, Duration wait, std::optional<Duration> lease,
                                       std::stop_token stop) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_try_lock(std::move(owner), wait, lease, std::move(stop), std::move(done)); });
}

std::future<void> Lock::async_lock(std::string owner, std::optional<Duration> lease) {
    return detail::future_of<void>([&](Completion<> done) {
        async_lock(std::move(owner), lease, {}, [done](std::exception_ptr error, bool) { done(error); });
    });
}

std::future<void> Lock::async_unlock(std::string owner) {
    return detail::future_of<void>([&](Completion<> done) { async_unlock(std::move(owner), std::move(done)); });
}

bool Lock::force_unlock() {
    auto& core = client_->core();
    refuse_loop_thread(core);
    detail::BlockingResult<bool> result;
    kind_->force_unlock(core, name_, [&result](detail::Failure error, Reply reply) {
        result.set(std::move(error), reply.integer == 1);
    });
    return result.get();
}

bool Lock::is_locked() const { return kind_->is_locked(reader(client_->core(), name_), name_); }

bool Lock::is_held_by_current_thread() const { return hold_count() > 0; }

std::int64_t Lock::hold_count() const {
    return kind_->hold_count(reader(client_->core(), name_), name_, client_->current_owner());
}

std::optional<Lock::Duration> Lock::remaining_ttl() const {
    if (!is_locked()) return std::nullopt;
    Reply reply = query(client_->core(), name_, "query lock", {"PTTL", name_});
    if (reply.integer == -2) return std::nullopt;
    if (reply.integer == -1) return Duration::max();
    return Duration(reply.integer);
}

std::vector<Lock::Holder> Lock::holders() const { return kind_->holders(reader(client_->core(), name_), name_); }

std::stop_token Lock::lease_lost_token() const { return lease_lost_token(client_->current_owner()); }

std::stop_token Lock::lease_lost_token(const std::string& owner) const {
    return client_->core().watchdog.lease_lost(name_, kind_->hold_field(owner));
}

}  // namespace holdfast
