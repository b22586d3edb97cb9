// holdfast::ReadWriteLock: Redisson's RReadWriteLock, byte-compatible with its data layout.
#pragma once

#include <string>

#include "holdfast/export.hpp"
#include "holdfast/lock.hpp"

namespace holdfast {

/// A distributed read-write lock stored as one Redis hash under `name`, shared
/// with a Java service using Redisson's RReadWriteLock on the same name.
///
/// Its two sides are Locks with the whole Lock API (blocking, timed, async with
/// explicit owners, leases, the watchdog, lease_lost_token(), the std lock
/// adaptors):
///  - read_lock(): shared. Any number of owners may hold it at once, each
///    reentrantly; refused while someone else holds the write lock.
///  - write_lock(): exclusive. Refused while anyone else holds either side;
///    reentrant. Its holder may also take the read lock (downgrade: lock the
///    write side, lock the read side, unlock the write side).
///
/// Upgrading is refused: asking for the write lock while holding the read lock
/// (the calling thread, or the explicit owner) throws DeadlockError, naming the
/// lock and the owner, at once instead of waiting for itself. DeadlockError is
/// a holdfast::Error, not a std::system_error; its code() (errc::deadlock)
/// compares equal to std::errc::resource_deadlock_would_occur, the code
/// std::mutex gives a lock that would wait for itself.
///
/// Waking: a read unlock that frees the lock wakes one waiter per client (the
/// waiters then are writers); a write unlock wakes every waiter, so all waiting
/// readers proceed together.
///
/// There is no writer preference: readers keep getting in while the lock is
/// read-held, so a steady stream of readers can keep a writer waiting (as in
/// Redisson).
///
/// Thread safety: a ReadWriteLock may be shared by threads: it is a cheap
/// handle (a name and a reference to its Client, which must outlive it), and
/// its two sides are Locks, each shareable as a Lock is, living as long as it
/// does. Each thread is its own owner (Client::current_owner()) on both sides:
/// threads of one process share the read side and exclude each other on the
/// write side, and a thread's write hold lets it read (the downgrade).
class HOLDFAST_EXPORT ReadWriteLock {
public:
    /// Throws std::invalid_argument for an empty name.
    ReadWriteLock(Client& client, std::string name);

    /// The key in Redis: Config::key_prefix, then the name given.
    const std::string& name() const { return read_.name(); }

    /// The shared side.
    Lock& read_lock() { return read_; }
    /// The exclusive side.
    Lock& write_lock() { return write_; }

private:
    // A Lock with the read or the write kind; only ReadWriteLock makes them.
    class Side final : public Lock {
    public:
        Side(Client& client, std::string name, const detail::LockKind& kind);
    };

    Side read_;
    Side write_;
};

}  // namespace holdfast
