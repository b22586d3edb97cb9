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
/// the same name shares the queue.
///
/// Wait budget: a waiter that dies in the queue is passed over once its
/// deadline passes. holdfast waiters keep their deadline one `wait_budget`
/// (default 5 s) ahead by retrying every quarter budget while they wait, so a
/// dead one stalls the queue for at most about one budget. (Redisson's waiters
/// use 5 minutes and do not refresh; they are handled as the spec says.)
///
/// try_lock() never joins the queue. A waiter that gives up leaves it, and
/// the waiters behind it move up.
class HOLDFAST_EXPORT FairLock : public Lock {
public:
    FairLock(Client& client, std::string name, Duration wait_budget = std::chrono::seconds(5));

    Duration wait_budget() const { return wait_budget_; }

private:
    Duration wait_budget_;
};

}  // namespace holdfast
