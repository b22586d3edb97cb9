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

using detail::LockAccess;

// Every lock has a TTL. A refusal without one (PTTL -1) may come from a hash
// that is no lock at all, which a waiter would wait on for ever: it stays a
// refusal only if every field of the kind's holders holds a hold count.
void refused_without_ttl(detail::ClientCore& core, const detail::LockKind& kind, const std::string& name,
                         std::function<void(Attempt)> report) {
    core.transport.execute(name, {"HGETALL", name}, [&core, &kind, name, report](detail::Failure error, Reply reply) {
        if (error) return report(Attempt::failed(error));
        for (const detail::LockField& field : detail::lock_fields(reply.elements, kind.shares_key()))
            if (field.role == kind.holds_as() && !detail::hold_count_in(field.value))
                return report(Attempt::failed(
                    detail::not_a_lock(core.transport.config().server_name(), name, field.name, field.value)));
        report(Attempt::refused(-1));
    });
}

// Asks `question` of the lock's key (detail::ask) and decodes the reply with the
// question's answer; `done` gets that, or the error.
template <class T>
void query_lock(detail::ClientCore& core, const std::string& name, detail::LockKind::Question<T> question,
                Completion<T> done) {
    std::vector<std::string_view> args(question.command.begin(), question.command.end());
    detail::ask(core.transport, name, "query lock", args,
                [answer = std::move(question.answer), done = std::move(done)](detail::Failure error, Reply reply) {
                    if (error) return done(std::move(error), T{});
                    T value{};
                    try {
                        value = answer(reply);
                    } catch (...) {
                        return done(std::current_exception(), T{});
                    }
                    done(nullptr, std::move(value));
                });
}

std::string server_of(const detail::ClientCore& core) { return core.transport.config().server_name(); }

}  // namespace

namespace detail {

void LockAccess::acquire(Lock& lock, std::string owner, std::optional<Duration> wait, std::optional<Duration> lease,
                         Acquired done, Watch watch, std::stop_token stop) {
    const auto subject = [&lock] { return detail::quoted(lock.name_); };
    detail::check_owner(subject, owner);
    detail::check_lease(subject, lease);
    if (wait) detail::check_wait(subject, *wait);
    auto& core = core_of(*lock.client_);
    const LockKind* kind = lock.kind_;
    const std::string& name = lock.name_;
    const Duration ttl = lease.value_or(core.watchdog.lease());
    detail::AcquireSpec spec;
    spec.hold = kind->hold_id(name, std::move(owner));
    spec.request = kind->acquire(core, name, spec.hold.owner, ttl, wait && *wait == Duration::zero());
    spec.request.verify_no_ttl = [&core, kind](const detail::HoldId& hold, std::function<void(Attempt)> report) {
        refused_without_ttl(core, *kind, hold.key, std::move(report));
    };
    spec.request.deadline = detail::deadline_after(wait);
    spec.request.stop = std::move(stop);
    spec.request.give_back = [&core, kind](const detail::HoldId& hold, std::function<void()> then) {
        kind->release(core, hold.key, hold.owner, "0", [then = std::move(then)](detail::Failure, Reply) { then(); });
    };
    // The caller's watch (RedLock) renews and judges its members itself.
    spec.keeping = {true, watch == Watch::watchdog, lease ? nullptr : &kind->renew(), ttl};
    spec.gives_back_unknown = watch == Watch::watchdog;
    detail::acquire_hold(core, std::move(spec), std::move(done));
}

std::optional<std::int64_t> LockAccess::acquire_blocking(Lock& lock, std::optional<Duration> wait,
                                                         std::optional<Duration> lease, std::stop_token stop) {
    detail::refuse_loop_thread(core(lock).transport);
    detail::BlockingResult<std::optional<std::int64_t>> result;
    acquire(
        lock, lock.client_->current_owner(), wait, lease,
        [&result](std::exception_ptr error, bool acquired, std::int64_t token) {
            result.set(std::move(error), acquired ? std::optional(token) : std::nullopt);
        },
        Watch::watchdog, std::move(stop));
    return result.get();
}

void LockAccess::release(Lock& lock, std::string owner, Released done) {
    detail::check_owner([&lock] { return detail::quoted(lock.name_); }, owner);
    auto& core = core_of(*lock.client_);
    detail::ReleaseSpec spec;
    spec.hold = lock.kind_->hold_id(lock.name_, std::move(owner));
    spec.send = [&core, kind = lock.kind_](const detail::HoldId& hold, const std::string& lease_ms,
                                           detail::ReplyHandler sent) {
        kind->release(core, hold.key, hold.owner, lease_ms, std::move(sent));
    };
    detail::release_hold(core, std::move(spec),
                         [done = std::move(done)](detail::ReleaseOutcome outcome) { done(std::move(outcome.error)); });
}

}  // namespace detail

Lock::Lock(Client& client, std::string name) : Lock(client, std::move(name), detail::reentrant_lock_kind()) {}

Lock::Lock(Client& client, std::string name, const detail::LockKind& kind)
    : client_(&client), name_(std::move(name)), kind_(&kind) {
    if (name_.empty()) throw std::invalid_argument("holdfast: a " + std::string(kind.noun()) + " name must not be empty");
    name_ = detail::mapped_name(client.config().key_prefix, std::move(name_));
    detail::check_one_slot(client.config(), kind.noun(), name_, kind.keys(name_));
}

void Lock::lock() { LockAccess::acquire_blocking(*this, std::nullopt, std::nullopt); }

void Lock::lock(Duration lease) { LockAccess::acquire_blocking(*this, std::nullopt, lease); }

bool Lock::lock(std::stop_token stop) {
    return LockAccess::acquire_blocking(*this, std::nullopt, std::nullopt, std::move(stop)).has_value();
}

bool Lock::lock_ms(Duration lease, std::stop_token stop) {
    return LockAccess::acquire_blocking(*this, std::nullopt, lease, std::move(stop)).has_value();
}

bool Lock::try_lock() { return LockAccess::acquire_blocking(*this, Duration::zero(), std::nullopt).has_value(); }

bool Lock::try_lock_for_ms(Duration wait, std::optional<Duration> lease, std::stop_token stop) {
    return LockAccess::acquire_blocking(*this, wait, lease, std::move(stop)).has_value();
}

void Lock::unlock() {
    detail::refuse_loop_thread(detail::core_of(*client_).transport);
    detail::BlockingResult<bool> result;
    // Reported by the pipeline already (event, metric, lease-lost token).
    LockAccess::release(*this, client_->current_owner(), [&result](std::exception_ptr) { result.set(nullptr, true); });
    result.get();
}

void Lock::release() {
    detail::refuse_loop_thread(detail::core_of(*client_).transport);
    detail::BlockingResult<bool> result;
    LockAccess::release(*this, client_->current_owner(),
                        [&result](std::exception_ptr error) { result.set(std::move(error), true); });
    result.get();
}

// The hold pipeline contains what an acquire's completion throws.
void Lock::async_try_lock(std::string owner, Duration wait, std::optional<Duration> lease, std::stop_token stop,
                          Completion<bool> done) {
    LockAccess::acquire(
        *this, std::move(owner), wait, lease,
        [done = std::move(done)](std::exception_ptr error, bool acquired, std::int64_t) { done(error, acquired); },
        LockAccess::Watch::watchdog, std::move(stop));
}

void Lock::async_lock(std::string owner, std::optional<Duration> lease, std::stop_token stop, Completion<bool> done) {
    LockAccess::acquire(
        *this, std::move(owner), std::nullopt, lease,
        [done = std::move(done)](std::exception_ptr error, bool acquired, std::int64_t) { done(error, acquired); },
        LockAccess::Watch::watchdog, std::move(stop));
}

void Lock::async_release(std::string owner, Completion<> done) {
    LockAccess::release(*this, std::move(owner), std::move(done));
}

std::future<bool> Lock::async_try_lock(std::string owner, Duration wait, std::optional<Duration> lease,
                                       std::stop_token stop) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_try_lock(std::move(owner), wait, lease, std::move(stop), std::move(done)); });
}

std::future<bool> Lock::async_lock(std::string owner, std::optional<Duration> lease, std::stop_token stop) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_lock(std::move(owner), lease, std::move(stop), std::move(done)); });
}

std::future<void> Lock::async_release(std::string owner) {
    return detail::future_of<void>([&](Completion<> done) { async_release(std::move(owner), std::move(done)); });
}

// The kind's renew script, as a renewal: only the owner's hold, its TTL then
// at least the lease. A watchdog-renewed hold is never cut below the
// watchdog's lease, so no renewal comes too late for it.
void Lock::async_extend_lease(std::string owner, Duration lease, Completion<bool> done) {
    const auto subject = [this] { return detail::quoted(name_); };
    detail::check_owner(subject, owner);
    detail::check_lease(subject, lease);
    auto& core = detail::core_of(*client_);
    done = detail::contained(core, kind_->noun(), name_, std::move(done));
    const auto sent = detail::Watchdog::Clock::now();
    std::string field = kind_->hold_field(owner);
    if (core.watchdog.renews(name_, field)) lease = std::max(lease, core.watchdog.lease());
    detail::eval_reporting(core.transport, kind_->renew(), {name_}, {std::to_string(lease.count()), field}, name_,
                           "extend the lease of",
                           [&core, name = name_, field, sent, lease, done = std::move(done)](detail::Failure error,
                                                                                            Reply reply) {
                               if (error) return done(std::move(error), false);
                               const bool held = reply.is_array() && !reply.elements.empty() &&
                                                 reply.elements[0].integer == 1;
                               if (held) core.watchdog.extend(name, field, sent, lease);
                               done(nullptr, held);
                           });
}

bool Lock::extend_lease_ms(Duration lease) {
    return detail::block<bool>(detail::core_of(*client_).transport, [&](Completion<bool> done) {
        async_extend_lease(client_->current_owner(), lease, std::move(done));
    });
}

std::future<bool> Lock::async_extend_lease(std::string owner, Duration lease) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_extend_lease(std::move(owner), lease, std::move(done)); });
}

void Lock::async_force_unlock(Completion<bool> done) {
    auto& core = detail::core_of(*client_);
    kind_->force_unlock(core, name_,
                        [done = detail::contained(core, kind_->noun(), name_, std::move(done))](
                            detail::Failure error, Reply reply) { done(error, !error && reply.integer == 1); });
}

bool Lock::force_unlock() {
    return detail::block<bool>(detail::core_of(*client_).transport,
                               [&](Completion<bool> done) { async_force_unlock(std::move(done)); });
}

std::future<bool> Lock::async_force_unlock() {
    return detail::future_of<bool>([&](Completion<bool> done) { async_force_unlock(std::move(done)); });
}

void Lock::async_is_locked(Completion<bool> done) const {
    auto& core = detail::core_of(*client_);
    query_lock(core, name_, kind_->is_locked(name_, server_of(core)), std::move(done));
}

void Lock::async_hold_count(std::string owner, Completion<std::int64_t> done) const {
    auto& core = detail::core_of(*client_);
    query_lock(core, name_, kind_->hold_count(name_, owner, server_of(core)), std::move(done));
}

void Lock::async_holders(Completion<std::vector<Holder>> done) const {
    auto& core = detail::core_of(*client_);
    query_lock(core, name_, kind_->holders(name_, server_of(core)), std::move(done));
}

// Free (nullopt) unless this kind holds it: the read-write lock's sides share one key.
void Lock::async_remaining_ttl(Completion<std::optional<Duration>> done) const {
    async_is_locked([this, done = std::move(done)](std::exception_ptr error, bool locked) mutable {
        if (error || !locked) return done(std::move(error), std::nullopt);
        auto& core = detail::core_of(*client_);
        query_lock<std::optional<Duration>>(core, name_,
                                           {{"PTTL", name_},
                                            [](const Reply& reply) -> std::optional<Duration> {
                                                if (reply.integer == -2) return std::nullopt;
                                                if (reply.integer == -1) return Duration::max();
                                                return Duration(reply.integer);
                                            }},
                                           std::move(done));
    });
}

bool Lock::is_locked() const {
    return detail::block<bool>(detail::core_of(*client_).transport,
                               [&](Completion<bool> done) { async_is_locked(std::move(done)); });
}

bool Lock::is_held_by_current_thread() const { return hold_count() > 0; }

bool Lock::is_held_by(const std::string& owner) const { return hold_count(owner) > 0; }

std::int64_t Lock::hold_count() const { return hold_count(client_->current_owner()); }

std::int64_t Lock::hold_count(const std::string& owner) const {
    return detail::block<std::int64_t>(detail::core_of(*client_).transport,
                                       [&](Completion<std::int64_t> done) { async_hold_count(owner, std::move(done)); });
}

std::optional<Lock::Duration> Lock::remaining_ttl() const {
    return detail::block<std::optional<Duration>>(
        detail::core_of(*client_).transport,
        [&](Completion<std::optional<Duration>> done) { async_remaining_ttl(std::move(done)); });
}

std::vector<Lock::Holder> Lock::holders() const {
    return detail::block<std::vector<Holder>>(detail::core_of(*client_).transport,
                                              [&](Completion<std::vector<Holder>> done) { async_holders(std::move(done)); });
}

std::future<bool> Lock::async_is_locked() const {
    return detail::future_of<bool>([&](Completion<bool> done) { async_is_locked(std::move(done)); });
}

std::future<std::int64_t> Lock::async_hold_count(std::string owner) const {
    return detail::future_of<std::int64_t>(
        [&](Completion<std::int64_t> done) { async_hold_count(std::move(owner), std::move(done)); });
}

std::future<std::optional<Lock::Duration>> Lock::async_remaining_ttl() const {
    return detail::future_of<std::optional<Duration>>(
        [&](Completion<std::optional<Duration>> done) { async_remaining_ttl(std::move(done)); });
}

std::future<std::vector<Lock::Holder>> Lock::async_holders() const {
    return detail::future_of<std::vector<Holder>>(
        [&](Completion<std::vector<Holder>> done) { async_holders(std::move(done)); });
}

std::stop_token Lock::lease_lost_token() const { return lease_lost_token(client_->current_owner()); }

std::stop_token Lock::lease_lost_token(const std::string& owner) const {
    return detail::core_of(*client_).watchdog.lease_lost(name_, kind_->hold_field(owner));
}

}  // namespace holdfast
