#include "holdfast/fenced_lock.hpp"

#include <charconv>

#include "hold/contained.hpp"
#include "core/client_core.hpp"
#include "holdfast/errors.hpp"
#include "holdfast_scripts.hpp"
#include "lock/access.hpp"
#include "lock/kind.hpp"
#include "primitive/blocking.hpp"
#include "primitive/call.hpp"
#include "primitive/count.hpp"
#include "primitive/names.hpp"

namespace holdfast {

namespace {

std::string token_key(const std::string& name) { return detail::fence_token_key(name); }

// Not listed for targeted wake-ups (its acquire script lists no waiter):
// the `0` after a name wakes it, as it wakes Redisson's waiters.
class FencedLockKind final : public detail::ReentrantLockKind {
public:
    FencedLockKind() : ReentrantLockKind(/*announces=*/true, /*lists_waiters=*/false) {}

    std::string_view noun() const override { return "fenced lock"; }
    std::vector<std::string> keys(const std::string& name) const override { return {name, token_key(name)}; }

    detail::AcquireRequest acquire(detail::ClientCore& core, const std::string& name, const std::string& owner,
                                   std::chrono::milliseconds lease, bool try_once) const override {
        detail::AcquireRequest request = ReentrantLockKind::acquire(core, name, owner, lease, try_once);
        request.attempt = [&core, lease_ms = std::to_string(lease.count())](const detail::HoldId& hold, auto report) {
            const std::string& name = hold.key;
            const std::string& owner = hold.owner;
            detail::eval_reporting(core.transport, scripts::fenced_lock_acquire, {name, token_key(name)},
                                   {lease_ms, owner, detail::lock_channel(name),
                                    std::string(core.transport.publish_command(name, detail::lock_channel(name)))},
                                   name, "lock", [report](detail::Failure error, detail::Reply reply) {
                                       if (error) return report(detail::Attempt::failed(std::move(error)));
                                       if (!reply.is_array() || reply.elements.size() != 2)
                                           return report(detail::Attempt::failed(
                                               {errc::server_error, "holdfast: unexpected reply to a fenced lock "
                                                                    "acquire: " + reply.describe()}));
                                       if (reply.elements[0].integer == -1)
                                           return report(detail::Attempt::acquired(reply.elements[1].integer));
                                       report(detail::Attempt::refused(reply.elements[0].integer));
                                   });
        };
        return request;
    }
};

const FencedLockKind fenced_lock_kind;

}  // namespace

FencedLock::FencedLock(Client& client, std::string name) : Lock(client, std::move(name), fenced_lock_kind) {}

using detail::LockAccess;

std::int64_t FencedLock::lock_and_get_token() { return *LockAccess::acquire_blocking(*this, std::nullopt, std::nullopt); }

std::optional<std::int64_t> FencedLock::try_lock_and_get_token() {
    return LockAccess::acquire_blocking(*this, Duration::zero(), std::nullopt);
}

std::optional<std::int64_t> FencedLock::try_lock_and_get_token_ms(std::optional<Duration> wait,
                                                                 std::optional<Duration> lease, std::stop_token stop) {
    return LockAccess::acquire_blocking(*this, wait, lease, std::move(stop));
}

void FencedLock::async_try_lock_and_get_token(std::string owner, Duration wait, std::optional<Duration> lease,
                                              std::stop_token stop, Completion<std::optional<std::int64_t>> done) {
    done = detail::contained(LockAccess::core(*this), "fenced lock", name(), std::move(done));
    LockAccess::acquire(
        *this, std::move(owner), wait, lease,
        [done = std::move(done)](std::exception_ptr error, bool acquired, std::int64_t token) {
            done(error, acquired ? std::optional(token) : std::nullopt);
        },
        LockAccess::Watch::watchdog, std::move(stop));
}

void FencedLock::async_lock_and_get_token(std::string owner, std::optional<Duration> lease, std::stop_token stop,
                                          Completion<std::optional<std::int64_t>> done) {
    done = detail::contained(LockAccess::core(*this), "fenced lock", name(), std::move(done));
    LockAccess::acquire(
        *this, std::move(owner), std::nullopt, lease,
        [done = std::move(done)](std::exception_ptr error, bool acquired, std::int64_t token) {
            done(error, acquired ? std::optional(token) : std::nullopt);
        },
        LockAccess::Watch::watchdog, std::move(stop));
}

std::future<std::optional<std::int64_t>> FencedLock::async_try_lock_and_get_token(std::string owner, Duration wait,
                                                                                  std::optional<Duration> lease,
                                                                                  std::stop_token stop) {
    return detail::future_of<std::optional<std::int64_t>>([&](Completion<std::optional<std::int64_t>> done) {
        async_try_lock_and_get_token(std::move(owner), wait, lease, std::move(stop), std::move(done));
    });
}

std::future<std::optional<std::int64_t>> FencedLock::async_lock_and_get_token(std::string owner,
                                                                              std::optional<Duration> lease,
                                                                              std::stop_token stop) {
    return detail::future_of<std::optional<std::int64_t>>([&](Completion<std::optional<std::int64_t>> done) {
        async_lock_and_get_token(std::move(owner), lease, std::move(stop), std::move(done));
    });
}

void FencedLock::async_token(Completion<std::int64_t> done) const {
    detail::ask_count(LockAccess::core(*this).transport, token_key(name()), "read the fencing token of",
                      "fencing token counter",
                      detail::contained(LockAccess::core(*this), "fenced lock", name(), std::move(done)));
}

std::int64_t FencedLock::token() const {
    return detail::block<std::int64_t>(LockAccess::core(*this).transport,
                                       [&](Completion<std::int64_t> done) { async_token(std::move(done)); });
}

std::future<std::int64_t> FencedLock::async_token() const {
    return detail::future_of<std::int64_t>([&](Completion<std::int64_t> done) { async_token(std::move(done)); });
}

}  // namespace holdfast
