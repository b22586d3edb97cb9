// What the compositions of locks (MultiLock, RedLock) use of each member Lock:
// its async acquire and release, its kind and its client.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/client_core.hpp"
#include "errors/failure.hpp"
#include "holdfast/lock.hpp"
#include "lock/kind.hpp"
#include "primitive/acquire.hpp"

namespace holdfast::detail {

struct LockAccess {
    using Released = std::function<void(Failure error)>;

    using Watch = Lock::Watch;

    /// Lock::acquire, with the failure's code: validates (throws), then
    /// acquires for `owner`; `done` runs on the lock's client's loop thread.
    static void acquire(Lock& lock, std::string owner, std::optional<Lock::Duration> wait,
                        std::optional<Lock::Duration> lease, AcquireHandler done, Watch watch = Watch::watchdog,
                        std::stop_token stop = {});
    /// Lock::release: one hold of `owner`; errc::not_owner if it holds none.
    static void release(Lock& lock, std::string owner, Released done);

    static const LockKind& kind(const Lock& lock) { return *lock.kind_; }
    static Client& client(const Lock& lock) { return lock.client(); }
    static ClientCore& core(const Lock& lock) { return lock.client().core(); }
};

}  // namespace holdfast::detail
