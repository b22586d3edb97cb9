// holdfast::SpinLock: Redisson's RSpinLock, an RLock that polls instead of listening.
#pragma once

#include "holdfast/export.hpp"
#include "holdfast/lock.hpp"

namespace holdfast {

/// The reentrant lock's layout and API (see Lock), without pub/sub: a refused
/// caller retries after 1 ms, doubling with jitter up to 128 ms (never past
/// the holder's TTL), and unlock publishes nothing. For deployments where
/// pub/sub is unavailable or too costly (many short-lived locks, proxies that
/// drop SUBSCRIBE); handoff latency is up to the current backoff step.
///
/// A Java RSpinLock on the same name shares the lock. A Lock (RLock) on the
/// same name excludes it too, but its waiters are not woken by a spin unlock.
///
/// Thread safety: a SpinLock may be shared by threads: it holds only the name
/// and a reference to its Client, which must outlive it. Each thread is its
/// own owner (Client::current_owner()), so threads of one process exclude each
/// other, and each waiting thread backs off on its own timer (on the client's
/// loop thread, never a thread per waiter); none is woken by another's unlock.
class HOLDFAST_EXPORT SpinLock : public Lock {
public:
    SpinLock(Client& client, std::string name);
};

}  // namespace holdfast
