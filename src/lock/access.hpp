// How a hold of a Lock is taken and released: for Lock itself, its family
// (FencedLock takes its token here) and the compositions (MultiLock, RedLock),
// without putting any of it in the public header.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>

#include "core/client_core.hpp"
#include "errors/failure.hpp"
#include "holdfast/lock.hpp"
#include "lock/kind.hpp"
#include "primitive/acquire.hpp"

namespace holdfast::detail {

struct LockAccess {
    using Duration = Lock::Duration;
    /// Completion of an acquire: the failure, or whether taken and its fencing token.
    using Acquired = AcquireHandler;
    /// Completion of a release: the failure release() would throw, or none.
    using Released = std::function<void(Failure error)>;

    /// Who keeps watch over a hold's lease: the client's watchdog (renewing a
    /// watchdog lease, and telling the holder when any lease lapses), or the
    /// caller (RedLock, which renews and judges its members itself).
    enum class Watch { watchdog, caller };

    /// Validates, then acquires `lock` for `owner`; `done` runs on the lock's client's loop thread.
    static void acquire(Lock& lock, std::string owner, std::optional<Duration> wait, std::optional<Duration> lease,
                        Acquired done, Watch watch = Watch::watchdog, std::stop_token stop = {});
    /// acquire() for the calling thread, blocking; nullopt when not acquired, else the token.
    static std::optional<std::int64_t> acquire_blocking(Lock& lock, std::optional<Duration> wait,
                                                        std::optional<Duration> lease, std::stop_token stop = {});
    /// Releases one hold of `owner`; `done` gets release()'s error, or none.
    static void release(Lock& lock, std::string owner, Released done);

    static const LockKind& kind(const Lock& lock) { return *lock.kind_; }
    static Client& client(const Lock& lock) { return *lock.client_; }
    static ClientCore& core(const Lock& lock) { return core_of(*lock.client_); }
};

}  // namespace holdfast::detail
