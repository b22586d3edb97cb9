// holdfast::SimpleLock: the SET NX PX lock, in the key format of redis-plus-plus,
// go-redsync and node-redlock.
#pragma once

#include <string>

#include "holdfast/export.hpp"
#include "holdfast/lock.hpp"

namespace holdfast {

/// A lock stored as a plain string under `name` holding its owner's token
/// (the holdfast owner id), taken by `SET name token NX PX lease`, released by
/// compare-and-delete and renewed by compare-and-pexpire. It is the format of
/// redis-plus-plus's RedLock, go-redsync and node-redlock, so holdfast and
/// those libraries exclude each other on the same key.
///
/// Not reentrant: while an owner holds it, try_lock() by the same owner
/// returns false, and a waiting acquire (lock(), try_lock_for(),
/// try_lock_until()) throws DeadlockError instead of waiting for itself: a
/// holdfast::Error, not a std::system_error, whose code() (errc::deadlock)
/// compares equal to std::errc::resource_deadlock_would_occur, what
/// std::mutex reports as a std::system_error. hold_count() is 0 or 1.
///
/// Waiting: the libraries above publish nothing on release, so a refused
/// caller polls, 1 ms doubling with jitter up to 128 ms, never sleeping past
/// the holder's TTL. Everything else (leases, the watchdog, lease-lost tokens,
/// owners, futures, errors) is Lock's; see holdfast::Lock.
///
/// Thread safety: a SimpleLock may be shared by threads: it holds only the
/// key and a reference to its Client, which must outlive it. Each thread is
/// its own owner (its token is Client::current_owner()), so two threads of
/// one process exclude each other, and a thread that holds it and asks again
/// gets DeadlockError rather than waiting for itself.
class HOLDFAST_EXPORT SimpleLock : public Lock {
public:
    SimpleLock(Client& client, std::string name);
};

}  // namespace holdfast
