// Encoding a command into RESP bytes.
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace holdfast::detail {

/// RESP encoding of one command; args may hold any bytes.
std::string encode_command(std::span<const std::string_view> args);
inline std::string encode_command(const std::vector<std::string_view>& args) {
    return encode_command(std::span<const std::string_view>(args));
}
inline std::string encode_command(std::initializer_list<std::string_view> args) {
    return encode_command(std::span<const std::string_view>(args.begin(), args.size()));
}

}  // namespace holdfast::detail
