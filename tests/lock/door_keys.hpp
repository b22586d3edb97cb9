// The channel of the lock named "door", shared by the lock tests.
#pragma once

#include <string>

// Internal linkage (const, not inline): each folder's tests have their own.
namespace holdfast::testing {

const std::string channel = "redisson_lock__channel:{door}";

}  // namespace holdfast::testing
