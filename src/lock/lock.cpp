#include "holdfast/lock.hpp"

#include <charconv>
#include <stdexcept>

#include "client/client_core.hpp"
#include "holdfast/errors.hpp"
#include "holdfast_scripts.hpp"
#include "primitive/acquire.hpp"
#include "primitive/blocking.hpp"
#include "primitive/errors.hpp"
#include "primitive/names.hpp"

namespace holdfast {

using detail::Attempt;
using detail::Reply;

namespace {

constexpr std::string_view unlock_message = "0";
constexpr std::string_view publish_command = "publish";

void check_lease(std::optional<Lock::Duration> lease) {
    if (lease && *lease <= Lock::Duration::zero())
        throw std::invalid_argument("holdfast: lease must be > 0 ms, got " + std::to_string(lease->count()) + " ms");
}

void check_wait(Lock::Duration wait) {
    if (wait < Lock::Duration::zero())
        throw std::invalid_argument("holdfast: wait must be >= 0 ms, got " + std::to_string(wait.count()) + " ms");
}

// A blocking call from the loop thread (a stop_callback, say) would wait for
// the very thread that must deliver its reply.
void refuse_loop_thread(detail::ClientCore& core) {
    if (core.transport.on_loop_thread())
        throw std::logic_error(
            "holdfast: blocking Lock call on the client's event loop thread (from a callback such as a "
            "lease-lost stop_callback); it would wait forever. Use the async_ members or another thread");
}

// Blocks on a one-shot command and returns its reply, throwing what failed.
Reply query(detail::ClientCore& core, const std::string& key, std::string what,
            std::vector<std::string_view> args) {
    refuse_loop_thread(core);
    detail::BlockingResult<Reply> result;
    core.transport.execute(key, args, [&core, &result, key, what](std::exception_ptr error, Reply reply) {
        if (error || !reply.is_error()) return result.set(std::move(error), std::move(reply));
        detail::reply_error(core.transport, key, what, reply,
                            [&result](std::exception_ptr e) { result.set(std::move(e), Reply{}); });
    });
    return result.get();
}

// A hold count as stored in the hash; anything else means the key is not a lock.
std::int64_t hold_count_of(const std::string& name, const std::string& field, const std::string& value) {
    std::int64_t count = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), count);
    if (ec != std::errc() || end != value.data() + value.size())
        throw WrongTypeError("holdfast: '" + name + "' is a hash but not a lock: field '" + field + "' holds '" +
                             value + "', not a hold count; pick another name or delete the key");
    return count;
}

}  // namespace

Lock::Lock(Client& client, std::string name)
    : client_(&client), name_(std::move(name)), channel_(detail::lock_channel(name_)) {
    if (name_.empty()) throw std::invalid_argument("holdfast: a lock name must not be empty");
}

void Lock::acquire(std::string owner, std::optional<Duration> wait, std::optional<Duration> lease, Acquired done) {
    auto& core = client_->core();
    const bool watchdog = !lease;
    std::string lease_ms = std::to_string((lease ? *lease : core.watchdog.lease()).count());

    detail::AcquireRequest request;
    request.channel = channel_;
    if (wait) request.deadline = std::chrono::steady_clock::now() + *wait;
    request.attempt = [&core, name = name_, owner, lease_ms = std::move(lease_ms)](
                          std::function<void(Attempt)> report) {
        core.transport.eval(scripts::lock_acquire, {name}, {lease_ms, owner},
                            [&core, name, report = std::move(report)](std::exception_ptr error, Reply reply) {
                                if (error) return report(Attempt::failed(error));
                                if (reply.is_nil()) return report(Attempt::acquired());
                                if (reply.is_integer()) return report(Attempt::refused(reply.integer));
                                detail::reply_error(core.transport, name, "lock", reply, [report](std::exception_ptr e) {
                                    report(Attempt::failed(e));
                                });
                            });
    };
    detail::acquire(core.transport, std::move(request),
                    [&core, name = name_, owner = std::move(owner), watchdog, done = std::move(done)](
                        std::exception_ptr error, bool acquired) {
                        // Tracked before the caller learns it holds the lock, so renewal never lags.
                        if (!error && acquired && watchdog) core.watchdog.track(scripts::lock_renew, name, owner);
                        done(error, acquired);
                    });
}

void Lock::release(std::string owner, Released done) {
    auto& core = client_->core();
    // A watchdog hold still held after this unlock gets a fresh lease; an
    // explicit lease keeps its deadline (0).
    const std::string lease_ms =
        core.watchdog.tracks(name_, owner) ? std::to_string(core.watchdog.lease().count()) : "0";
    core.transport.eval(
        scripts::lock_release, {name_, channel_}, {unlock_message, lease_ms, owner, publish_command},
        [&core, name = name_, owner, done = std::move(done)](std::exception_ptr error, Reply reply) {
            // Renewal ends with the last hold, and with any failure: the
            // outcome is unknown or refused, and the lease will end the hold.
            if (error || !reply.is_integer() || reply.integer == 1) core.watchdog.untrack(name, owner);
            if (error) return done(error);
            if (reply.is_error()) return detail::reply_error(core.transport, name, "unlock", reply, done);
            if (reply.is_nil())
                return done(std::make_exception_ptr(NotOwnerError(
                    "holdfast: cannot unlock '" + name + "': owner " + owner +
                    " does not hold it (never locked, already unlocked, or its lease ran out)")));
            done(nullptr);
        });
}

bool Lock::acquire_blocking(std::optional<Duration> wait, std::optional<Duration> lease) {
    refuse_loop_thread(client_->core());
    detail::BlockingResult<bool> result;
    acquire(client_->current_owner(), wait, lease,
            [&result](std::exception_ptr error, bool acquired) { result.set(std::move(error), acquired); });
    return result.get();
}

void Lock::lock() { acquire_blocking(std::nullopt, std::nullopt); }

void Lock::lock(Duration lease) {
    check_lease(lease);
    acquire_blocking(std::nullopt, lease);
}

bool Lock::try_lock() { return acquire_blocking(Duration::zero(), std::nullopt); }

bool Lock::try_lock_for_ms(Duration wait, std::optional<Duration> lease) {
    check_wait(wait);
    check_lease(lease);
    return acquire_blocking(wait, lease);
}

void Lock::unlock() {
    refuse_loop_thread(client_->core());
    detail::BlockingResult<bool> result;
    release(client_->current_owner(), [&result](std::exception_ptr error) { result.set(std::move(error), true); });
    result.get();
}

std::future<bool> Lock::async_try_lock(std::string owner, Duration wait, std::optional<Duration> lease) {
    check_wait(wait);
    check_lease(lease);
    auto promise = std::make_shared<std::promise<bool>>();
    auto future = promise->get_future();
    acquire(std::move(owner), wait, lease, [promise](std::exception_ptr error, bool acquired) {
        if (error) promise->set_exception(error);
        else promise->set_value(acquired);
    });
    return future;
}

std::future<void> Lock::async_lock(std::string owner, std::optional<Duration> lease) {
    check_lease(lease);
    auto promise = std::make_shared<std::promise<void>>();
    auto future = promise->get_future();
    acquire(std::move(owner), std::nullopt, lease, [promise](std::exception_ptr error, bool) {
        if (error) promise->set_exception(error);
        else promise->set_value();
    });
    return future;
}

std::future<void> Lock::async_unlock(std::string owner) {
    auto promise = std::make_shared<std::promise<void>>();
    auto future = promise->get_future();
    release(std::move(owner), [promise](std::exception_ptr error) {
        if (error) promise->set_exception(error);
        else promise->set_value();
    });
    return future;
}

bool Lock::force_unlock() {
    auto& core = client_->core();
    refuse_loop_thread(core);
    detail::BlockingResult<bool> result;
    core.transport.eval(scripts::lock_force_unlock, {name_, channel_}, {unlock_message, publish_command},
                        [&core, &result, name = name_](std::exception_ptr error, Reply reply) {
                            if (error || !reply.is_error()) return result.set(std::move(error), reply.integer == 1);
                            detail::reply_error(core.transport, name, "force-unlock", reply,
                                                [&result](std::exception_ptr e) { result.set(std::move(e), false); });
                        });
    return result.get();
}

bool Lock::is_locked() const {
    return query(client_->core(), name_, "query lock", {"EXISTS", name_}).integer == 1;
}

bool Lock::is_held_by_current_thread() const {
    const std::string owner = client_->current_owner();
    return query(client_->core(), name_, "query lock", {"HEXISTS", name_, owner}).integer == 1;
}

std::int64_t Lock::hold_count() const {
    const std::string owner = client_->current_owner();
    Reply reply = query(client_->core(), name_, "query lock", {"HGET", name_, owner});
    return reply.is_nil() ? 0 : hold_count_of(name_, owner, reply.str);
}

std::optional<Lock::Duration> Lock::remaining_ttl() const {
    Reply reply = query(client_->core(), name_, "query lock", {"PTTL", name_});
    if (reply.integer == -2) return std::nullopt;
    if (reply.integer == -1) return Duration::max();
    return Duration(reply.integer);
}

std::vector<Lock::Holder> Lock::holders() const {
    Reply reply = query(client_->core(), name_, "query lock", {"HGETALL", name_});
    std::vector<Holder> result;
    for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2)
        result.push_back({reply.elements[i].str, hold_count_of(name_, reply.elements[i].str, reply.elements[i + 1].str)});
    return result;
}

std::stop_token Lock::lease_lost_token() const { return lease_lost_token(client_->current_owner()); }

std::stop_token Lock::lease_lost_token(const std::string& owner) const {
    return client_->core().watchdog.lease_lost(name_, owner);
}

}  // namespace holdfast
