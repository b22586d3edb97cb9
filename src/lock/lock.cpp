#include "holdfast/lock.hpp"

#include <stdexcept>

#include "core/client_core.hpp"
#include "common/quoted.hpp"
#include "holdfast/errors.hpp"
#include "primitive/acquire.hpp"
#include "primitive/arguments.hpp"
#include "primitive/blocking.hpp"
#include "primitive/call.hpp"
#include "primitive/errors.hpp"
#include "primitive/names.hpp"
#include "primitive/replica_sync.hpp"
#include "lock/kind.hpp"

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
    core.transport.execute(name, {"HGETALL", name}, [&core, &kind, name, report](std::exception_ptr error,
                                                                                 Reply reply) {
        if (error) return report(Attempt::failed(error));
        try {
            for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2)
                if (kind.holder_of(reply.elements[i].str))
                    detail::hold_count_of(core.transport.config().server_name(), name, reply.elements[i].str,
                                          reply.elements[i + 1].str);
        } catch (const WrongTypeError&) {
            return report(Attempt::failed(std::current_exception()));
        }
        report(Attempt::refused(-1));
    });
}

// Gives back, one at a time, the holds the server still counts for `owner`
// that no caller was told of, until the lock is released; then `done`. The
// unlock already succeeded, so a failure here is left to the lease.
void release_unacknowledged(detail::ClientCore& core, const detail::LockKind& kind, const std::string& name,
                            const std::string& owner, std::function<void(std::exception_ptr)> done) {
    kind.release(core, name, owner, "0",
                 [&core, &kind, name, owner, done = std::move(done)](std::exception_ptr error, Reply reply) mutable {
                     if (!error && reply.is_integer() && reply.integer == 0)
                         return release_unacknowledged(core, kind, name, owner, std::move(done));
                     core.watchdog.untrack(name, kind.hold_field(owner));
                     done(nullptr);
                 });
}

// Whether `error` is (or derives from) E.
template <class E>
bool is(const std::exception_ptr& error) {
    if (!error) return false;
    try {
        std::rethrow_exception(error);
    } catch (const E&) {
        return true;
    } catch (...) {
        return false;
    }
}

// An acquire that failed with its outcome unknown (the connection dropped
// after the script was sent) may have taken the lock. If the caller holds
// nothing of it otherwise, one release gives back what it may have taken,
// as Redisson does, instead of leaving it held until its lease ends. With
// other holds known, the ledger gives the extra one back at the last unlock.
// A refused AUTH means nothing ran.
void give_back_unknown(detail::ClientCore& core, const detail::LockKind& kind, const std::string& name,
                       const std::string& owner, const std::exception_ptr& error) {
    if (!is<ConnectionError>(error) || is<AuthError>(error)) return;
    if (core.holds.known(name, kind.hold_field(owner))) return;
    kind.release(core, name, owner, "0", [](std::exception_ptr, Reply) {});
}

}  // namespace

Lock::Lock(Client& client, std::string name) : Lock(client, std::move(name), detail::reentrant_lock_kind()) {}

Lock::Lock(Client& client, std::string name, const detail::LockKind& kind)
    : client_(&client), name_(std::move(name)), kind_(&kind) {
    if (name_.empty()) throw std::invalid_argument("holdfast: a " + std::string(kind.noun()) + " name must not be empty");
    name_ = detail::mapped_name(client.config().key_prefix, std::move(name_));
}

void Lock::acquire(std::string owner, std::optional<Duration> wait, std::optional<Duration> lease, Acquired done,
                   Watch watch, std::stop_token stop) {
    const auto subject = [this] { return detail::quoted(name_); };
    detail::check_owner(subject, owner);
    detail::check_lease(subject, lease);
    if (wait) detail::check_wait(subject, *wait);
    auto& core = client_->core();
    const Duration ttl = lease.value_or(core.watchdog.lease());
    const bool try_once = wait && *wait == Duration::zero();
    detail::AcquireRequest request = kind_->acquire(core, name_, owner, ttl, try_once);
    request.deadline = detail::deadline_after(wait);
    request.stop = std::move(stop);
    request.meter = {core.telemetry.get(), kind_->noun(), name_};
    // Releases the one hold just taken for `owner` that the caller will not
    // be told of (a stop landed during the attempt, or replicas did not
    // confirm it): `finish` never recorded it, so no ledger entry or renewal.
    auto give_back = [&core, kind = kind_, name = name_, owner](std::function<void()> then) {
        kind->release(core, name, owner, "0", [then = std::move(then)](std::exception_ptr, Reply) { then(); });
    };
    request.give_back = give_back;
    // When the attempt that took the lock was sent: its lease runs from then at the latest.
    auto sent = std::make_shared<detail::Watchdog::Clock::time_point>();
    request.attempt = [&core, &kind = *kind_, name = name_, sent, attempt = std::move(request.attempt)](
                          std::function<void(Attempt)> report) {
        *sent = detail::Watchdog::Clock::now();
        attempt([&core, &kind, name, report = std::move(report)](Attempt result) {
            if (result.outcome != Attempt::Outcome::refused || result.ttl != -1) return report(std::move(result));
            refused_without_ttl(core, kind, name, std::move(report));
        });
    };
    const detail::Script* renew = lease ? nullptr : &kind_->renew();
    auto finish = [&core, kind = kind_, name = name_, owner, renew, ttl, sent, watch,
                   done = std::move(done)](std::exception_ptr error, bool acquired, std::int64_t token) {
                        const std::string field = kind->hold_field(owner);
                        // Watched before the caller learns it holds the lock, so renewal never lags.
                        if (!error && acquired) {
                            core.holds.taken(name, field);
                            if (watch == Watch::watchdog) core.watchdog.track(renew, kind->noun(), name, field, *sent, ttl);
                        }
                        if (error && watch == Watch::watchdog) give_back_unknown(core, *kind, name, owner, error);
                        done(error, acquired, token);
                    };
    // Replica sync (docs/deployments.md) before the caller learns it holds the lock.
    detail::acquire(core.transport, std::move(request),
                    [&core, kind = kind_, name = name_, give_back = std::move(give_back), finish = std::move(finish)](
                        std::exception_ptr error, bool acquired, std::int64_t token) mutable {
                        if (error || !acquired || !core.transport.syncs_replicas(name))
                            return finish(std::move(error), acquired, token);
                        detail::sync_acquire(
                            core.transport, name, std::string(kind->noun()) + " " + detail::quoted(name),
                            std::move(give_back),
                            [finish = std::move(finish), token](std::exception_ptr e) mutable {
                                finish(e, !e, e ? 0 : token);
                            });
                    });
}

void Lock::release(std::string owner, Released done) {
    detail::check_owner([this] { return detail::quoted(name_); }, owner);
    auto& core = client_->core();
    const std::string field = kind_->hold_field(owner);
    // A watchdog hold still held after this unlock gets a fresh lease; an
    // explicit lease keeps its deadline (0).
    const std::string lease_ms =
        core.watchdog.renews(name_, field) ? std::to_string(core.watchdog.lease().count()) : "0";
    auto after = [&core, kind = kind_, name = name_, owner, field, done = std::move(done)](
                       std::exception_ptr error, Reply reply) mutable {
                       // Every script writes last, so a Redis error reply (an ACL refusing
                       // the channel, say) changed nothing: the hold is still held and renewed.
                       if (is<ServerError>(error)) return done(error);
                       // Read before untrack(): a hold lost locally is reported as such.
                       const auto lost_for = core.watchdog.lost_for(name, field);
                       if (!error && reply.is_nil()) core.holds.forget(name, field);
                       detail::HoldLedger::Clock::duration held_for{};
                       const auto known = error || reply.is_integer() ? core.holds.given_back(name, field, &held_for)
                                                                      : std::nullopt;
                       if (!error && known == 0 && reply.integer == 1) core.telemetry->held(kind->noun(), held_for);
                       // Still held, though this was the last hold its caller knows of:
                       // the rest came from acquires whose replies were lost.
                       if (!error && reply.is_integer() && reply.integer == 0 && known == 0)
                           return release_unacknowledged(core, *kind, name, owner, std::move(done));
                       // Renewal ends with the last hold, and with a lost connection:
                       // the outcome is unknown, and the lease will end the hold.
                       if (error || !reply.is_integer() || reply.integer == 1) core.watchdog.untrack(name, field);
                       if (error) return done(error);
                       if (lost_for)
                           return done(std::make_exception_ptr(LeaseLostError(
                               "holdfast: " + std::string(kind->noun()) + " " + detail::quoted(name) + " on " +
                               core.transport.config().server_name() + " was lost by owner " +
                               detail::quoted(owner) + " " + std::to_string(lost_for->count()) +
                               " ms before this unlock: no renewal was confirmed for a whole lease (the server "
                               "unreachable, paused or refusing), so another owner may have held it since; " +
                               (reply.is_nil() ? "the server no longer counted this hold"
                                               : "the unlock was carried out") +
                               ". Watch lease_lost_token() to stop work when this happens, and fence writes "
                               "(FencedLock) where a late write must be refused")));
                       // The fair lock, as Redisson's, answers 1 for a lock already gone:
                       // not a release of anything this client took.
                       if (reply.is_nil() || (reply.integer == 1 && !known))
                           return done(std::make_exception_ptr(NotOwnerError(
                               "holdfast: cannot unlock " + std::string(kind->noun()) + " " + detail::quoted(name) +
                               " on " + core.transport.config().server_name() + ": owner " + detail::quoted(owner) +
                               " does not hold it (never locked, already unlocked, or its lease ran out); unlock "
                               "only what this owner locked, and watch lease_lost_token() to learn when a hold is "
                               "lost")));
                       done(nullptr);
                   };
    kind_->release(core, name_, owner, lease_ms,
                   [&core, name = name_, after = std::move(after)](std::exception_ptr error, Reply reply) mutable {
                       if (error || !core.transport.syncs_replicas(name)) return after(std::move(error), std::move(reply));
                       // Replica sync: the caller learns of the release once replicas have it.
                       auto shared = std::make_shared<decltype(after)>(std::move(after));
                       detail::sync_release(core.transport, name, [shared, reply = std::move(reply)]() mutable {
                           (*shared)(nullptr, std::move(reply));
                       });
                   });
}

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
    release(client_->current_owner(), [&result](std::exception_ptr error) { result.set(std::move(error), true); });
    result.get();
}

void Lock::async_try_lock(std::string owner, Duration wait, std::optional<Duration> lease, std::stop_token stop,
                          Completion<bool> done) {
    acquire(
        std::move(owner), wait, lease,
        [done = std::move(done)](std::exception_ptr error, bool acquired, std::int64_t) { done(error, acquired); },
        Watch::watchdog, std::move(stop));
}

void Lock::async_lock(std::string owner, std::optional<Duration> lease, std::stop_token stop, Completion<bool> done) {
    acquire(
        std::move(owner), std::nullopt, lease,
        [done = std::move(done)](std::exception_ptr error, bool acquired, std::int64_t) { done(error, acquired); },
        Watch::watchdog, std::move(stop));
}

void Lock::async_unlock(std::string owner, Completion<> done) { release(std::move(owner), std::move(done)); }

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
    kind_->force_unlock(core, name_, [&result](std::exception_ptr error, Reply reply) {
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
