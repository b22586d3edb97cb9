// A group lock's hash read back (docs/redisson-layout.md, "Group lock"), for
// inspect(): per value held, `<field>` -> owner and the owner's
// `<field>:<owner>:expire_time` and `<field>:<owner>:lock_count`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "transport/reply.hpp"

namespace holdfast::detail {

/// One value held: its field, owner, hold count (0 when the hash has none)
/// and expire time in epoch ms (nullopt when it has none).
struct GroupValue {
    std::string field;
    std::string owner;
    std::int64_t hold_count = 0;
    std::optional<std::int64_t> expires_ms;
};

/// Whether `name` is a value's field: 22 characters of Base64.
bool is_value_field(std::string_view name);

/// HGETALL's reply on a hash, read as a group's: its values held, in hash
/// order; nullopt when the hash is no group (a field of another shape, a
/// count or time that is no integer, or no expire time or count at all).
std::optional<std::vector<GroupValue>> group_values(const std::vector<Reply>& hgetall);

}  // namespace holdfast::detail
