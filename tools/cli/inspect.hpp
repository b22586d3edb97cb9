// Reading a LockState the way status and unlock both need to.
#pragma once

#include <string>

#include "holdfast/inspect.hpp"

namespace holdfast::cli {

/// A decimal integer too large for a count: Redis's INCRBY and DECRBY refuse
/// it, so it is no semaphore or latch, and no lock token either.
bool beyond_int64(const LockState& state);
/// "the integer ..., beyond the 64-bit counts ...".
std::string beyond_int64_description(const LockState& state);

}  // namespace holdfast::cli
