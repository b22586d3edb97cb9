// Encoding a command into RESP bytes.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <memory_resource>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace holdfast::detail {

/// RESP encoding of one command; args may hold any bytes.
std::string encode_command(std::span<const std::string_view> args);
/// The same, appended to `out` (a buffer of the caller's memory).
void append_command(std::pmr::string& out, std::span<const std::string_view> args);
inline std::string encode_command(const std::vector<std::string_view>& args) {
    return encode_command(std::span<const std::string_view>(args));
}
inline std::string encode_command(std::initializer_list<std::string_view> args) {
    return encode_command(std::span<const std::string_view>(args.begin(), args.size()));
}

/// A script call's request, kept in case it must be sent again (NOSCRIPT, an
/// ACL refusal of the trusted twin): its bytes in the same allocation as the
/// record, as a lock script's request fits in the frame.
struct ScriptRequest {
    std::array<std::byte, 512> frame;
    std::pmr::monotonic_buffer_resource memory{frame.data(), frame.size()};  // then the heap
    std::pmr::string bytes{&memory};
};

}  // namespace holdfast::detail
