#include "common/quoted.hpp"

namespace holdfast::detail {
namespace {

// Length of the valid UTF-8 sequence at the start of `text`, or 0 if there is
// none (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
std::size_t utf8_sequence(std::string_view text) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(0);
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xbf;  // the second byte's range
    if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        length = 3;
        if (lead == 0xe0) low = 0xa0;
        if (lead == 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        length = 4;
        if (lead == 0xf0) low = 0x90;
        if (lead == 0xf4) high = 0x8f;
    } else {
        return 0;
    }
    if (text.size() < length || byte(1) < low || byte(1) > high) return 0;
    for (std::size_t i = 2; i < length; ++i)
        if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
    return length;
}

void escape(std::string& out, unsigned char c) {
    switch (c) {
        case '\n': out += "\\n"; return;
        case '\r': out += "\\r"; return;
        case '\t': out += "\\t"; return;
    }
    constexpr char hex[] = "0123456789abcdef";
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 0xf];
}

}  // namespace

std::string quoted(std::string_view name) {
    std::string out = "'";
    std::size_t i = 0;
    while (i < name.size() && i < quoted_limit) {
        const auto c = static_cast<unsigned char>(name[i]);
        std::size_t n = 0;
        if (c >= 0x20 && c < 0x7f) {
            out += name[i++];
        } else if (c >= 0x80 && (n = utf8_sequence(name.substr(i))) > 0) {
            out += name.substr(i, n);
            i += n;
        } else {
            escape(out, c);
            ++i;
        }
    }
    out += '\'';
    if (i < name.size()) out += "... (" + std::to_string(name.size()) + " bytes)";
    return out;
}

}  // namespace holdfast::detail
