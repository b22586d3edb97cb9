// A group lock's hash (MultiValueLock, Redisson's RedissonFasterMultiLock:
// docs/multi_value_lock.md, "In Redis") as the witness and the sweep read
// it: per value held, `<field>` names its owner, and the owner's
// `<field>:<owner>:expire_time` (epoch ms) and `<field>:<owner>:lock_count`
// its hold. Read here on its own, not through the library's reader: the
// checker does not take the library's word for what its layout means.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace holdfast::check {

/// The holds of a group, from its hash as HGETALL lists it (field, value,
/// field, value...) at server time `now_ms`, one "<owner>=<value>" per value
/// held: a value's field names its owner, while that owner's expire time for
/// it is after `now_ms` (the group's acquire script takes a value whose time
/// has passed, or is missing, as free). `<value>` is the name `names` gives
/// the field (the values the workers take), else the field itself. In hash order.
std::vector<std::string> group_holds(const std::vector<std::string>& hgetall, std::int64_t now_ms,
                                     const std::map<std::string, std::string>& names);

/// The owner of one of group_holds()' entries (and any other field, whole).
std::string holder_of(const std::string& hold);

}  // namespace holdfast::check
