// How Redisson's permit-expirable semaphore stores its permits in the ZSET
// `{name}:timeout`: shared by the semaphore and by inspect(), so the ids
// status shows are the ids acquire() returned.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace holdfast::detail {

/// The score of a permit without a lease (Redisson's "never" expiry, epoch ms).
inline constexpr std::int64_t permit_never_expires = 922337203685477;

/// A permit id's bytes as lowercase hex, the form the API hands out.
inline std::string permit_hex(std::string_view bytes) {
    constexpr char digits[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(bytes.size() * 2);
    for (const unsigned char byte : bytes) {
        hex += digits[byte >> 4];
        hex += digits[byte & 0xf];
    }
    return hex;
}

/// 16 random bytes, as Redisson's ServiceManager.generateId().
std::string new_permit();

/// The bytes each permit id names (32 hex digits, either case), in order.
/// std::invalid_argument naming the semaphore `name` for an id that is not
/// one, for no ids at all, and for an id given twice.
std::vector<std::string> permit_bytes(std::string_view noun, const std::string& name,
                                      const std::vector<std::string>& permit_ids);

}  // namespace holdfast::detail
