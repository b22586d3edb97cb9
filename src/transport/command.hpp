// Encoding a command into RESP bytes (hiredis's formatter).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace holdfast::detail {

/// RESP encoding of one command; args may hold any bytes.
std::string encode_command(const std::vector<std::string_view>& args);
std::string encode_command(std::initializer_list<std::string_view> args);

}  // namespace holdfast::detail
