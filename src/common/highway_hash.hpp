// HighwayHash (Alakuijala, Cox and Wassenberg, "Fast keyed hash/pseudo-random
// function using SIMD multiply and permute", 2016; Google's
// github.com/google/highwayhash): a keyed hash over 256 bits of state, here
// its portable 64-bit-lane form, written from that description. holdfast
// needs it for one thing: the group lock's field names are Redisson's
// HighwayHash-128 of each value (multi_value_lock/field.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace holdfast::detail {

using HighwayKey = std::array<std::uint64_t, 4>;

/// The 128-bit HighwayHash of `bytes` under `key`, as the reference gives it:
/// two 64-bit words, [0] first.
std::array<std::uint64_t, 2> highway_hash128(const HighwayKey& key, std::string_view bytes);

}  // namespace holdfast::detail
