// What the compositions of locks (MultiLock, RedLock) use of each member Lock:
// its async acquire and release, its kind and its client.
#pragma once

#include <optional>
#include <string>

#include "core/client_core.hpp"
#include "holdfast/lock.hpp"
#include "lock/kind.hpp"

namespace holdfast::detail {

struct LockAccess {
    using Acquired = Lock::Acquired;
    using Released = Lock::Released;

    using Watch = Lock::Watch;

    /// Lock::acquire: validates, then acquires for `owner`; `done` runs on the lock's client's loop thread.
    static void acquire(Lock& lock, std::string owner, std::optional<Lock::Duration> wait,
                        std::optional<Lock::Duration> lease, Acquired done, Watch watch = Watch::watchdog,
                        std::stop_token stop = {}) {
        lock.acquire(std::move(owner), wait, lease, std::move(done), watch, std::move(stop));
    }
    /// Lock::release: one hold of `owner`; NotOwnerError if it holds none.
    static void release(Lock& lock, std::string owner, Released done) { lock.start_release(std::move(owner), std::move(done)); }

    static const LockKind& kind(const Lock& lock) { return *lock.kind_; }
    static Client& client(const Lock& lock) { return lock.client(); }
    static ClientCore& core(const Lock& lock) { return lock.client().core(); }
};

}  // namespace holdfast::detail
