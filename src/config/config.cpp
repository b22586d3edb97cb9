#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "holdfast/config.hpp"
#include "common/quoted.hpp"

namespace holdfast {
namespace {

// The URI with its password (before '@', or ?password=) replaced by "***":
// an error message may end up in a log.
std::string redacted(std::string_view uri) {
    std::string text(uri);
    const auto scheme_end = text.find("://");
    const auto at = text.rfind('@');
    if (scheme_end != std::string::npos && at != std::string::npos && at > scheme_end) {
        const auto begin = scheme_end + 3;
        const auto colon = text.find(':', begin);
        const auto secret = colon != std::string::npos && colon < at ? colon + 1 : begin;
        text.replace(secret, at - secret, "***");
    }
    // password= and sentinel_password=, each.
    for (auto p = text.find("password="); p != std::string::npos; p = text.find("password=", p + 9)) {
        const auto end = text.find('&', p);
        text.replace(p + 9, (end == std::string::npos ? text.size() : end) - (p + 9), "***");
    }
    return text;
}

[[noreturn]] void bad_uri(std::string_view uri, const std::string& why) {
    throw std::invalid_argument("holdfast: bad Redis URI " + detail::quoted(redacted(uri)) + ": " + why +
                                " (expected redis[s]://[user:password@]host[:port][/db], "
                                "unix://[[user]:password@]/path.sock[?db=N&password=...], "
                                "redis[s]-sentinel://[user:password@]host[:port][,host[:port]...][/db]#master or "
                                "redis[s]-cluster://[user:password@]host[:port][,host[:port]...], each with optional "
                                "settings ?key_prefix=P&fair_lock_wait_timeout=MS&nat_map=HOST:PORT=HOST:PORT,...&scan_interval=MS "
                                "(a sentinel URI also ?sentinel_password=...&sentinel_username=...))");
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

// host[:port], [v6addr][:port]. A default port of 0 makes the port optional
// (nat_map's "any port").
ServerAddress read_address(std::string_view text, std::string_view uri, std::uint16_t default_port) {
    ServerAddress address{std::string(text), default_port};
    if (text.starts_with('[')) {
        const auto close = text.find(']');
        if (close == std::string_view::npos) bad_uri(uri, "unclosed '['");
        address.host = std::string(text.substr(1, close - 1));
        const std::string_view after = text.substr(close + 1);
        if (!after.empty() && after.front() != ':') bad_uri(uri, "junk after ']'");
        if (!after.empty()) address.port = parse_number<std::uint16_t>(after.substr(1), uri, "port");
    } else if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
        address.host = std::string(text.substr(0, colon));
        address.port = parse_number<std::uint16_t>(text.substr(colon + 1), uri, "port");
    }
    if (address.host.empty()) bad_uri(uri, "no host");
    if (address.port == 0 && default_port != 0) bad_uri(uri, "port 0");
    return address;
}

// nat_map=ANNOUNCED=REACHABLE[,ANNOUNCED=REACHABLE...], each host[:port].
std::vector<NatMapping> read_nat_map(std::string_view text, std::string_view uri) {
    std::vector<NatMapping> map;
    for (;;) {
        const auto comma = text.find(',');
        const std::string_view entry = text.substr(0, comma);
        const auto eq = entry.find('=');
        if (eq == std::string_view::npos)
            bad_uri(uri, "nat_map entry " + detail::quoted(entry) + " is not ANNOUNCED=REACHABLE (host[:port] each)");
        map.push_back({read_address(entry.substr(0, eq), uri, 0), read_address(entry.substr(eq + 1), uri, 0)});
        if (comma == std::string_view::npos) return map;
        text.remove_prefix(comma + 1);
    }
}

// The settings after '?': key_prefix, fair_lock_wait_timeout, nat_map, scan_interval; for a
// redis-sentinel:// URI also sentinel_password and sentinel_username; for a
// unix:// URI also db, password and username (redis-py's names).
void read_parameters(std::string_view query, std::string_view uri, Config& config, bool unix_socket) {
    const bool sentinel = config.topology == Topology::sentinel;
    for (;;) {
        const auto amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        const auto eq = pair.find('=');
        const std::string_view key = pair.substr(0, eq);
        const std::string_view value = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
        if (unix_socket && key == "db") config.database = parse_number<int>(value, uri, "database");
        else if (unix_socket && key == "password") config.password = percent_decode(value, uri);
        else if (unix_socket && key == "username") config.username = percent_decode(value, uri);
        else if (key == "key_prefix") config.key_prefix = percent_decode(value, uri);
        else if (key == "fair_lock_wait_timeout")
            config.fair_lock_wait_timeout =
                std::chrono::milliseconds(parse_number<std::int64_t>(value, uri, "fair_lock_wait_timeout"));
        else if (key == "nat_map") config.nat_map = read_nat_map(percent_decode(value, uri), uri);
        else if (key == "scan_interval")
            (sentinel ? config.sentinel_scan_interval : config.cluster_scan_interval) =
                std::chrono::milliseconds(parse_number<std::int64_t>(value, uri, "scan_interval"));
        // The sentinels' own credentials: a sentinel URI's user:password is the master's.
        else if (sentinel && key == "sentinel_password") config.sentinel_password = percent_decode(value, uri);
        else if (sentinel && key == "sentinel_username") config.sentinel_username = percent_decode(value, uri);
        else
            bad_uri(uri, "unknown parameter " + detail::quoted(key) + " (known: " +
                             (unix_socket ? "db, password, username, " : "") +
                             (sentinel ? "sentinel_password, sentinel_username, " : "") +
                             "key_prefix, fair_lock_wait_timeout, nat_map, scan_interval)");
        if (amp == std::string_view::npos) return;
        query.remove_prefix(amp + 1);
    }
}

struct Scheme {
    std::string_view prefix;
    Topology topology;
    bool tls;
};

constexpr Scheme schemes[] = {
    {"redis://", Topology::single, false},          {"rediss://", Topology::single, true},
    {"redis-sentinel://", Topology::sentinel, false}, {"rediss-sentinel://", Topology::sentinel, true},
    {"redis-cluster://", Topology::cluster, false},   {"rediss-cluster://", Topology::cluster, true},
};

Config from_unix_uri(std::string_view uri) {
    Config config;
    std::string_view rest = uri.substr(std::string_view("unix://").size());
    if (auto q = rest.find('?'); q != std::string_view::npos) {
        read_parameters(rest.substr(q + 1), uri, config, true);
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

}  // namespace

std::string ServerAddress::name() const {
    if (host.find(':') != std::string::npos) return '[' + host + "]:" + std::to_string(port);
    return host + ':' + std::to_string(port);
}

Config Config::from_uri(std::string_view uri) {
    if (uri.starts_with("unix://")) return from_unix_uri(uri);
    const Scheme* scheme = nullptr;
    for (const Scheme& s : schemes)
        if (uri.starts_with(s.prefix)) scheme = &s;
    if (!scheme) bad_uri(uri, "unknown scheme");
    Config config;
    config.topology = scheme->topology;
    config.tls.enabled = scheme->tls;
    std::string_view rest = uri.substr(scheme->prefix.size());
    if (auto at = rest.rfind('@'); at != std::string_view::npos) {
        const std::string_view userinfo = rest.substr(0, at);
        // An '@' in the settings would otherwise end a "password" silently.
        if (const auto q = userinfo.find('?'); q != std::string_view::npos && userinfo.find('=', q) != std::string_view::npos)
            bad_uri(uri, "an '@' after the '?': escape it as %40 in the settings (and a '?' in the password as %3F)");
        read_userinfo(userinfo, uri, config);
        rest = rest.substr(at + 1);
    }
    if (auto hash = rest.find('#'); hash != std::string_view::npos) {
        if (config.topology != Topology::sentinel) bad_uri(uri, "a #master-name is only for redis-sentinel://");
        config.sentinel_master = percent_decode(rest.substr(hash + 1), uri);
        rest = rest.substr(0, hash);
    }
    if (auto q = rest.find('?'); q != std::string_view::npos) {
        read_parameters(rest.substr(q + 1), uri, config, false);
        rest = rest.substr(0, q);
    }
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
        if (slash + 1 < rest.size()) config.database = parse_number<int>(rest.substr(slash + 1), uri, "database");
        rest = rest.substr(0, slash);
    }
    const std::uint16_t default_port = config.topology == Topology::sentinel ? 26379 : 6379;
    for (;;) {
        const auto comma = rest.find(',');
        config.servers.push_back(read_address(rest.substr(0, comma), uri, default_port));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    switch (config.topology) {
        case Topology::single:
            if (config.servers.size() > 1)
                bad_uri(uri, "several hosts: use redis-sentinel:// or redis-cluster:// for more than one server");
            config.host = config.servers.front().host;
            config.port = config.servers.front().port;
            config.servers.clear();
            break;
        case Topology::sentinel:
            if (config.sentinel_master.empty()) bad_uri(uri, "no #master-name after the sentinels");
            break;
        case Topology::cluster:
            if (config.database != 0) bad_uri(uri, "a cluster has only database 0");
            break;
    }
    return config;
}

std::size_t Config::pool_size() const {
    return std::max<std::size_t>(1, connection_pool_size.value_or(topology == Topology::cluster ? 1 : 2));
}

std::string Config::server_name() const {
    auto listed = [this] {
        std::string names;
        for (const ServerAddress& s : servers) names += (names.empty() ? "" : ",") + s.name();
        return names;
    };
    switch (topology) {
        case Topology::sentinel:
            return "master " + detail::quoted(sentinel_master) + " (sentinels " + listed() + ")";
        case Topology::cluster:
            return "cluster (seeds " + listed() + ")";
        case Topology::single:
            break;
    }
    if (!unix_socket.empty()) return unix_socket;
    return ServerAddress{host, port}.name();
}

}  // namespace holdfast
