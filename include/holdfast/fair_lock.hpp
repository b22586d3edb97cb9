// holdfast::FairLock: Redisson's RFairLock, a reentrant lock granted in request order.
#pragma once

#include <chrono>
#include <string>

#include "holdfast/export.hpp"
#include "holdfast/lock.hpp"

namespace holdfast {

/// A Lock (same API, leases and watchdog) that waiters get first come, first
/// served: a waiter joins the queue `redisson_lock_queue:{name}` and a deadline
/// in `redisson_lock_timeout:{name}`; an unlock wakes only the first waiter, on
/// its own channel `redisson_lock__channel:{name}:<owner>`. A Java RFairLock on
/// the same name shares the queue, in arrival order.
///
/// Deadlines are chained as RFairLock chains them, with the client's
/// Config::fair_lock_wait_timeout (Redisson's fairLockWaitTimeout, 5 minutes
/// by default) as each waiter's budget. Beside them, a holdfast waiter proves
/// it is alive at least every quarter `dead_waiter_timeout` (default 5 s); one
/// that stops (killed, crashed) is passed over by holdfast's scripts that long
/// after its last sign of life, instead of after its 5-minute deadline.
///
/// try_lock() never joins the queue. A waiter that gives up leaves it, and
/// the waiters behind it move up.
///
/// Thread safety: a FairLock may be shared by threads: it holds only the
/// name, its dead-waiter timeout and a reference to its Client, which must
/// outlive it. Each thread is its own owner (Client::current_owner()), so
/// each waiting thread has its own place in the queue and its own channel, and
/// threads of one process are granted the lock in the order they asked, as
/// other processes' waiters are; the async_ members queue the owner id they
/// are given.
class HOLDFAST_EXPORT FairLock : public Lock {
public:
    /// `dead_waiter_timeout` > 0: how long after its last sign of life a
    /// holdfast waiter of this lock that stopped retrying keeps its place.
    FairLock(Client& client, std::string name, Duration dead_waiter_timeout = std::chrono::seconds(5));

    Duration dead_waiter_timeout() const { return dead_waiter_timeout_; }

private:
    Duration dead_waiter_timeout_;
};

}  // namespace holdfast
