// The group lock's field names: Redisson's name for a value in the group's
// hash (docs/redisson-layout.md, "Group lock").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace holdfast::detail {

/// Redisson's field for the value whose codec bytes are `encoded`
/// (org.redisson.misc.Hash.hash128toBase64): HighwayHash-128 under Redisson's
/// fixed key, its two 64-bit words big-endian, in standard Base64 without the
/// trailing "==": 22 characters of [A-Za-z0-9+/].
std::string value_field(std::string_view encoded);

/// The fields of `values`, sorted, each once: a set, as Redisson keeps them.
std::vector<std::string> value_fields(const std::vector<std::string>& values);

}  // namespace holdfast::detail
