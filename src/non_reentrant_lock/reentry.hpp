// How the non-reentrant locks report an owner taking them twice.
#pragma once

#include "primitive/acquire.hpp"

namespace holdfast::detail {

class ClientCore;

/// Makes `request`'s attempt report the acquire script's refusal of a second
/// hold (an error reply NON_REENTRANT_REACQUIRE, non_reentrant_lock/
/// refuse_reentry.lua.part) as a DeadlockError naming the lock, its server and
/// the owner: what std::unique_lock::lock() throws for a lock it owns already
/// (resource_deadlock_would_occur). Every other outcome passes unchanged.
void report_reentry_as_deadlock(ClientCore& core, AcquireRequest& request);

}  // namespace holdfast::detail
