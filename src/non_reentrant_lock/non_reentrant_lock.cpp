#include "holdfast/non_reentrant_lock.hpp"

#include <utility>

#include "fair_lock/kind.hpp"
#include "holdfast_scripts.hpp"
#include "lock/kind.hpp"
#include "non_reentrant_lock/reentry.hpp"

namespace holdfast {

namespace {

// The reentrant lock's kind with the acquire that refuses a second hold
// (non_reentrant_lock/acquire.lua); release, renewal and wake-ups unchanged.
class NonReentrantLockKind final : public detail::ReentrantLockKind {
public:
    NonReentrantLockKind() : ReentrantLockKind(true, true, &scripts::non_reentrant_lock_acquire) {}

    std::string_view noun() const override { return "non-reentrant lock"; }
    bool reentrant() const override { return false; }

    detail::AcquireRequest acquire(detail::ClientCore& core, const std::string& name, const std::string& owner,
                                   std::chrono::milliseconds lease, bool try_once) const override {
        detail::AcquireRequest request = ReentrantLockKind::acquire(core, name, owner, lease, try_once);
        detail::report_reentry_as_deadlock(core, request);
        return request;
    }
};

const NonReentrantLockKind non_reentrant_lock_kind;

}  // namespace

NonReentrantLock::NonReentrantLock(Client& client, std::string name)
    : Lock(client, std::move(name), non_reentrant_lock_kind) {}

NonReentrantFairLock::NonReentrantFairLock(Client& client, std::string name, Duration dead_waiter_timeout)
    : FairLock(client, std::move(name), dead_waiter_timeout,
               detail::fair_lock_kind(dead_waiter_timeout, /*reentrant=*/false)) {}

}  // namespace holdfast
