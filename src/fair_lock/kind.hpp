// The fair lock's kinds (Redisson's RFairLock and RedissonNonReentrantFairLock).
#pragma once

#include "holdfast/lock.hpp"
#include "lock/kind.hpp"

namespace holdfast::detail {

/// The fair lock's kind whose holdfast waiters are passed over
/// `dead_waiter_timeout` (> 0, else std::invalid_argument) after their last
/// sign of life; `reentrant` false: the non-reentrant fair lock's, whose
/// acquire refuses a second hold with DeadlockError. Lives as long as the program.
const LockKind& fair_lock_kind(Lock::Duration dead_waiter_timeout, bool reentrant = true);

}  // namespace holdfast::detail
