#include "common/quoted.hpp"

namespace holdfast::detail {
namespace {

// Length of the printable UTF-8 sequence at the start of `text`, or 0 if there
// is none (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF;
// and no C1 control).
std::size_t utf8_sequence(std::string_view text) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(0);
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xbf;  // the second byte's range
    if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2;
        if (lead == 0xc2) low = 0xa0;  // U+0080..U+009F are C1 controls (U+009B starts an escape sequence)
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
        case '\\': out += "\\\\"; return;
    }
    constexpr char hex[] = "0123456789abcdef";
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 0xf];
}

// Appends the first quoted_limit bytes of `name`, escaped; true if cut there.
bool append_escaped(std::string& out, std::string_view name) {
    std::size_t i = 0;
    while (i < name.size() && i < quoted_limit) {
        const auto c = static_cast<unsigned char>(name[i]);
        std::size_t n = 0;
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += name[i++];
        } else if (c >= 0x80 && (n = utf8_sequence(name.substr(i))) > 0) {
            out += name.substr(i, n);
            i += n;
        } else {
            escape(out, c);
            ++i;
        }
    }
    return i < name.size();
}

std::string cut_note(std::string_view name) { return "... (" + std::to_string(name.size()) + " bytes)"; }

}  // namespace

std::string quoted(std::string_view name) {
    std::string out = "'";
    const bool cut = append_escaped(out, name);
    out += '\'';
    if (cut) out += cut_note(name);
    return out;
}

std::string printable(std::string_view name) {
    std::string out;
    if (append_escaped(out, name)) out += cut_note(name);
    return out;
}

}  // namespace holdfast::detail
