#include <charconv>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "holdfast/config.hpp"
#include "common/quoted.hpp"

namespace holdfast {
namespace {

[[noreturn]] void bad_uri(std::string_view uri, const std::string& why) {
    throw std::invalid_argument("holdfast: bad Redis URI " + detail::quoted(uri) + ": " + why +
                                " (expected redis://[user:password@]host[:port][/db] or "
                                "unix://[[user]:password@]/path.sock[?db=N&password=...])");
}

std::string percent_decode(std::string_view text, std::string_view uri) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out += text[i];
            continue;
        }
        unsigned value = 0;
        if (i + 2 >= text.size() || std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16).ptr !=
                                             text.data() + i + 3)
            bad_uri(uri, "bad %-escape");
        out += static_cast<char>(value);
        i += 2;
    }
    return out;
}

template <class Int>
Int parse_number(std::string_view text, std::string_view uri, const char* what) {
    Int value{};
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    const std::string named = std::string(what) + " '" + std::string(text) + "'";
    if (!text.empty() && ec == std::errc::result_out_of_range && end == text.data() + text.size())
        bad_uri(uri, named + " is out of range");
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) bad_uri(uri, named + " is not a number");
    if constexpr (std::is_signed_v<Int>)
        if (value < 0) bad_uri(uri, named + " is negative");
    return value;
}

// "user:password", ":password" or "password" (as redis-cli -u takes it).
void read_userinfo(std::string_view userinfo, std::string_view uri, Config& config) {
    auto colon = userinfo.find(':');
    if (colon == std::string_view::npos) {
        config.password = percent_decode(userinfo, uri);
    } else {
        config.username = percent_decode(userinfo.substr(0, colon), uri);
        config.password = percent_decode(userinfo.substr(colon + 1), uri);
    }
}

// A unix:// URI's query: db=N, password=..., username=... (redis-py's names).
void read_parameters(std::string_view query, std::string_view uri, Config& config) {
    for (;;) {
        const auto amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        const auto eq = pair.find('=');
        const std::string_view key = pair.substr(0, eq);
        const std::string_view value = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
        if (key == "db") config.database = parse_number<int>(value, uri, "database");
        else if (key == "password") config.password = percent_decode(value, uri);
        else if (key == "username") config.username = percent_decode(value, uri);
        else bad_uri(uri, "unknown parameter " + detail::quoted(key) + " (known: db, password, username)");
        if (amp == std::string_view::npos) return;
        query.remove_prefix(amp + 1);
    }
}

}  // namespace

Config Config::from_uri(std::string_view uri) {
    Config config;
    constexpr std::string_view redis_scheme = "redis://", unix_scheme = "unix://";
    if (uri.starts_with(unix_scheme)) {
        std::string_view rest = uri.substr(unix_scheme.size());
        if (auto q = rest.find('?'); q != std::string_view::npos) {
            read_parameters(rest.substr(q + 1), uri, config);
            rest = rest.substr(0, q);
        }
        // unix://[user:]password@/path: the path starts at the first "@/".
        if (!rest.starts_with('/')) {
            if (auto at = rest.find("@/"); at != std::string_view::npos) {
                if (!config.password.empty()) bad_uri(uri, "a password both before '@' and in ?password=");
                read_userinfo(rest.substr(0, at), uri, config);
                rest = rest.substr(at + 1);
            }
        }
        if (rest.empty() || rest.front() != '/') bad_uri(uri, "the socket path must be absolute");
        config.unix_socket = std::string(rest);
        return config;
    }
    if (uri.starts_with("rediss://")) bad_uri(uri, "TLS (rediss://) is not supported");
    if (!uri.starts_with(redis_scheme)) bad_uri(uri, "unknown scheme");
    std::string_view rest = uri.substr(redis_scheme.size());
    if (auto at = rest.rfind('@'); at != std::string_view::npos) {
        read_userinfo(rest.substr(0, at), uri, config);
        rest = rest.substr(at + 1);
    }
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
        if (slash + 1 < rest.size()) config.database = parse_number<int>(rest.substr(slash + 1), uri, "database");
        rest = rest.substr(0, slash);
    }
    std::string_view host = rest;
    if (rest.starts_with('[')) {  // [::1]:port
        auto close = rest.find(']');
        if (close == std::string_view::npos) bad_uri(uri, "unclosed '['");
        host = rest.substr(1, close - 1);
        rest = rest.substr(close + 1);
        if (!rest.empty() && rest.front() != ':') bad_uri(uri, "junk after ']'");
        if (!rest.empty()) config.port = parse_number<std::uint16_t>(rest.substr(1), uri, "port");
    } else if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
        host = rest.substr(0, colon);
        config.port = parse_number<std::uint16_t>(rest.substr(colon + 1), uri, "port");
    }
    if (host.empty()) bad_uri(uri, "no host");
    if (config.port == 0) bad_uri(uri, "port 0");
    config.host = std::string(host);
    return config;
}

std::string Config::server_name() const {
    if (!unix_socket.empty()) return unix_socket;
    if (host.find(':') != std::string::npos) return '[' + host + "]:" + std::to_string(port);
    return host + ':' + std::to_string(port);
}

}  // namespace holdfast
