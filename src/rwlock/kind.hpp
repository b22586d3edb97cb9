// The read-write lock's two sides (Redisson's RedissonReadLock and
// RedissonWriteLock): one hash `name` whose `mode` field says which side holds
// it, reader fields `<owner>`, the writer's field `<owner>:write`, and a key per
// read hold whose TTL is that hold's lease.
#pragma once

#include "lock/kind.hpp"

namespace holdfast::detail {

/// Readers share the lock; the writer may read too (downgrade).
const LockKind& read_lock_kind();
/// One writer excludes everyone else. Asking for it while holding a read lock
/// fails with DeadlockError (code() resource_deadlock_would_occur).
const LockKind& write_lock_kind();

}  // namespace holdfast::detail
