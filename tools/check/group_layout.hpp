// A group lock's hash (MultiValueLock, Redisson's RedissonFasterMultiLock:
// docs/multi_value_lock.md, "In Redis") as the witness and the sweep read
// it: per value held, `<field>` names its owner, and the owner's
// `<field>:<owner>:expire_time` (epoch ms) and `<field>:<owner>:lock_count`
// its hold. Read here on its own, not through the library's reader: the
// checker does not take the library's word for what its layout means.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace holdfast::check {

/// The owners holding a value of the group, from its hash as HGETALL lists
/// it (field, value, field, value...) at server time `now_ms`: the owner a
/// value's field names, while that owner's expire time for it is after
/// `now_ms` (the group's acquire script takes a value whose time has passed,
/// or is missing, as free). Each owner once, in hash order.
std::vector<std::string> group_holders(const std::vector<std::string>& hgetall, std::int64_t now_ms);

}  // namespace holdfast::check
