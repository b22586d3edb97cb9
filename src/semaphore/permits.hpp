// How Redisson's permit-expirable semaphore stores its permits in the ZSET
// `{name}:timeout`: shared by the semaphore and by inspect(), so the ids
// status shows are the ids acquire() returned.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

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

}  // namespace holdfast::detail
