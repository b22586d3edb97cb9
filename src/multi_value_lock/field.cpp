#include "multi_value_lock/field.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include "common/highway_hash.hpp"

namespace holdfast::detail {

namespace {

// Redisson's key for every hash it makes (org.redisson.misc.Hash).
constexpr HighwayKey redisson_key{0x9e3779b97f4a7c15ull, 0xf39cc0605cedc834ull, 0x1082276bf3a27251ull,
                                  0xf86c6a11d0c18e95ull};

constexpr std::string_view base64_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

std::string value_field(std::string_view encoded) {
    const auto words = highway_hash128(redisson_key, encoded);
    std::array<unsigned char, 16> bytes{};
    for (std::size_t i = 0; i < 8; ++i) {
        bytes[i] = static_cast<unsigned char>(words[0] >> (56 - 8 * i));
        bytes[8 + i] = static_cast<unsigned char>(words[1] >> (56 - 8 * i));
    }
    // 16 bytes: five whole groups of three, then one byte (two characters; the "==" left off).
    std::string field;
    field.reserve(22);
    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const std::uint32_t group = (std::uint32_t{bytes[i]} << 16) | (std::uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
        for (int shift = 18; shift >= 0; shift -= 6) field += base64_alphabet[(group >> shift) & 63];
    }
    field += base64_alphabet[bytes[i] >> 2];
    field += base64_alphabet[(bytes[i] & 3) << 4];
    return field;
}

std::vector<std::string> value_fields(const std::vector<std::string>& values) {
    std::vector<std::string> fields;
    fields.reserve(values.size());
    for (const std::string& value : values) fields.push_back(value_field(value));
    std::sort(fields.begin(), fields.end());
    fields.erase(std::unique(fields.begin(), fields.end()), fields.end());
    return fields;
}

}  // namespace holdfast::detail
