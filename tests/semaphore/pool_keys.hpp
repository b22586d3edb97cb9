// The channel of the semaphore named "pool", shared by the semaphore tests.
#pragma once

#include <string>

// Internal linkage (const, not inline): each folder's tests have their own.
namespace holdfast::testing {

const std::string channel = "redisson_sc:{pool}";

}  // namespace holdfast::testing
