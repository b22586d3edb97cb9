// The keys and Java owners the fair-lock tests share: the queue of the lock
// named "line", and owner ids as Redisson's RFairLock writes them
// (<client uuid>:<thread id>).
#pragma once

#include <string>

// Internal linkage (const, not inline): each folder's tests have their own.
namespace holdfast::testing {

const std::string queue = "redisson_lock_queue:{line}";
const std::string deadlines = "redisson_lock_timeout:{line}";
const std::string java_holder = "5f1c6a4e-0000-4000-8000-00000000beef:1";
const std::string first_java = "5f1c6a4e-0000-4000-8000-00000000beef:2";
const std::string last_java = "5f1c6a4e-0000-4000-8000-00000000beef:3";

}  // namespace holdfast::testing
