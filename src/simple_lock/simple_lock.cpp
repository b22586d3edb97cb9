#include "holdfast/simple_lock.hpp"


#include "core/client_core.hpp"
#include "holdfast/errors.hpp"
#include "holdfast_scripts.hpp"
#include "lock/kind.hpp"

namespace holdfast {

namespace {

using detail::AcquireRequest;
using detail::Attempt;
using detail::ClientCore;
using detail::Reply;
using detail::ReplyHandler;

// The acquire script's reply when the caller already holds the lock.
constexpr long long held_by_caller = -3;

// The key is a string holding the holder's token; nothing is published, so
// waiters poll.
class SimpleLockKind final : public detail::LockKind {
public:
    std::string_view noun() const override { return "simple lock"; }

    AcquireRequest acquire(ClientCore& core, const std::string&, const std::string&,
                           std::chrono::milliseconds lease, bool try_once) const override {
        AcquireRequest request;
        request.backoff = detail::Backoff{};
        request.attempt = [&core, lease_ms = std::to_string(lease.count()), try_once](const detail::HoldId& hold,
                                                                                     auto report) {
            const std::string& name = hold.key;
            const std::string& owner = hold.owner;
            detail::eval_reporting(
                core.transport, scripts::simple_lock_acquire, {name}, {lease_ms, owner}, name, "lock",
                [&name, &owner, try_once, report = std::move(report)](detail::Failure error, Reply reply) {
                    if (error) return report(Attempt::failed(std::move(error)));
                    if (reply.is_nil()) return report(Attempt::acquired());
                    if (reply.integer != held_by_caller || try_once) return report(Attempt::refused(reply.integer));
                    report(Attempt::failed({errc::deadlock, "holdfast: simple lock '" + name +
                                                                "' is already held by owner " + owner +
                                                                "; it is not reentrant, so waiting for it would wait "
                                                                "for itself"}));
                });
        };
        return request;
    }

    void release(ClientCore& core, const std::string& name, const std::string& owner, const std::string&,
                 ReplyHandler done) const override {
        detail::eval_reporting(core.transport, scripts::simple_lock_release, {name}, {owner}, name, "unlock", std::move(done));
    }

    void force_unlock(ClientCore& core, const std::string& name, ReplyHandler done) const override {
        detail::eval_reporting(core.transport, scripts::simple_lock_force_unlock, {name}, {}, name, "force-unlock",
                               std::move(done));
    }

    const detail::Script& renew() const override { return scripts::simple_lock_renew; }

    bool reentrant() const override { return false; }

    // GET refuses a key of another type with WRONGTYPE, which the query reports.
    Question<bool> is_locked(const std::string& name, const std::string&) const override {
        return {{"GET", name}, [](const Reply& reply) { return !reply.is_nil(); }};
    }

    Question<std::int64_t> hold_count(const std::string& name, const std::string& owner,
                                      const std::string&) const override {
        return {{"GET", name}, [owner](const Reply& reply) -> std::int64_t {
                    return !reply.is_nil() && reply.str == owner ? 1 : 0;
                }};
    }

    Question<std::vector<Lock::Holder>> holders(const std::string& name, const std::string&) const override {
        return {{"GET", name}, [](const Reply& reply) -> std::vector<Lock::Holder> {
                    if (reply.is_nil()) return {};
                    return {{reply.str, 1}};
                }};
    }
};

const detail::LockKind& simple_lock_kind() {
    static const SimpleLockKind kind;
    return kind;
}

}  // namespace

SimpleLock::SimpleLock(Client& client, std::string name) : Lock(client, std::move(name), simple_lock_kind()) {}

}  // namespace holdfast
