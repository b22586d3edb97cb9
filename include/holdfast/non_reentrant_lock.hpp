// holdfast::NonReentrantLock and NonReentrantFairLock: Redisson's
// RedissonNonReentrantLock and RedissonNonReentrantFairLock (Redisson 4.4.0 on).
#pragma once

#include <chrono>
#include <string>

#include "holdfast/export.hpp"
#include "holdfast/fair_lock.hpp"
#include "holdfast/lock.hpp"

namespace holdfast {

/// A Lock (same layout, API, leases, watchdog and wake-ups) that an owner
/// holds at most once: lock(), try_lock(), try_lock_for()/until() and the
/// async forms by an owner that holds it already fail with DeadlockError
/// (a holdfast::Error, not a std::system_error, whose code() errc::deadlock
/// compares equal to std::errc::resource_deadlock_would_occur: the code
/// std::unique_lock::lock() and try_lock() report, in a std::system_error,
/// for a mutex they own already), whatever the wait: the server's acquire script refuses it (the error
/// NON_REENTRANT_REACQUIRE) and nothing is taken or changed. Other owners
/// wait for it and are woken as on a Lock. For code whose re-entry would be a
/// bug: it fails at once instead of nesting silently.
///
/// A Java RedissonNonReentrantLock, and an RLock, on the same name share it:
/// one hash, one channel. So does a holdfast Lock, which may still re-enter
/// a hold it took itself.
///
/// hold_count() is 0 or 1; unlock() and release() as Lock's.
class HOLDFAST_EXPORT NonReentrantLock : public Lock {
public:
    NonReentrantLock(Client& client, std::string name);
};

/// A FairLock (queue, deadlines, dead waiters passed over) that an owner holds
/// at most once, as NonReentrantLock: a second acquire by its holder fails
/// with DeadlockError, in try_lock() too, and joins no queue. A Java
/// RedissonNonReentrantFairLock or RFairLock on the same name shares the queue.
class HOLDFAST_EXPORT NonReentrantFairLock : public FairLock {
public:
    /// `dead_waiter_timeout` > 0: as FairLock's.
    NonReentrantFairLock(Client& client, std::string name,
                         Duration dead_waiter_timeout = std::chrono::seconds(5));
};

}  // namespace holdfast
