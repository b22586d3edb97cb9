// holdfast::MultiLock: all of N locks or none, taken in parallel.
#pragma once

#include <concepts>
#include <functional>
#include <initializer_list>
#include <memory>
#include <vector>

#include "holdfast/export.hpp"
#include "holdfast/lock_group.hpp"

namespace holdfast {

namespace detail {
class LostWatches;
}

/// All-or-nothing over N Lock objects of any kinds (Lock, SimpleLock, the
/// other members of the family) on any clients: Redisson's RedissonMultiLock.
///
/// Acquiring sends one attempt to every lock at once (one round trip per
/// server, not one per lock). If every lock is taken, the group is held.
/// Otherwise it releases what it took and, if it may wait, waits for the first
/// lock that refused while holding nothing else, then tries the others again
/// at once. Holding at most that one lock while waiting is what makes two
/// MultiLocks over the same locks in opposite orders unable to deadlock, as
/// std::lock does for mutexes. An error from any lock releases what was taken
/// and is reported.
///
/// unlock() releases every lock (all at once); if any release fails, the first
/// error in locks() order is thrown after all have been tried (e.g.
/// NotOwnerError naming the lock whose hold ran out).
///
/// Leases are each member's: without an explicit lease every lock is renewed
/// by its own client's watchdog, and lease_lost_token() is requested when any
/// one of them is lost.
///
/// Errors, owners, thread safety: see LockGroup.
class HOLDFAST_EXPORT MultiLock : public LockGroup {
public:
    explicit MultiLock(std::vector<std::reference_wrapper<Lock>> locks);
    /// MultiLock both{orders, invoices};
    MultiLock(std::initializer_list<std::reference_wrapper<Lock>> locks)
        : MultiLock(std::vector<std::reference_wrapper<Lock>>(locks)) {}
    /// MultiLock both(orders, invoices);
    template <std::derived_from<Lock>... Locks>
        requires(sizeof...(Locks) > 0)
    explicit MultiLock(Locks&... locks) : MultiLock(std::vector<std::reference_wrapper<Lock>>{locks...}) {}
    ~MultiLock() override;

protected:
    void acquire(Owners owners, std::optional<Duration> wait, std::optional<Duration> lease, std::stop_token stop,
                 Acquired done) override;
    void start_release(Owners owners, Released done) override;
    std::stop_token lost(const Owners& owners) const override;

private:
    std::shared_ptr<detail::LostWatches> watches_;
};

}  // namespace holdfast
