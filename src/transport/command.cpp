#include "transport/command.hpp"

#include <charconv>

namespace holdfast::detail {
namespace {

// "*<n>\r\n" or "$<n>\r\n". By hand rather than hiredis's formatter, which
// prints each length with sprintf: a few percent of the client's CPU.
template <class String>
void append_header(String& out, char kind, std::size_t n) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
    out += kind;
    out.append(digits, end);
    out += "\r\n";
}

template <class String>
void append(String& out, std::span<const std::string_view> args) {
    std::size_t size = out.size() + 16;
    for (const auto arg : args) size += arg.size() + 16;
    out.reserve(size);
    append_header(out, '*', args.size());
    for (const auto arg : args) {
        append_header(out, '$', arg.size());
        out += arg;
        out += "\r\n";
    }
}

}  // namespace

std::string encode_command(std::span<const std::string_view> args) {
    std::string out;
    append(out, args);
    return out;
}

void append_command(std::pmr::string& out, std::span<const std::string_view> args) { append(out, args); }

}  // namespace holdfast::detail
