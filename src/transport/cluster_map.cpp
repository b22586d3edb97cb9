#include "transport/cluster_map.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace holdfast::detail {

namespace {

// The CRC of each byte value, so that a key costs one lookup per byte rather
// than eight shifts: every command hashes its key (8% of a cluster client's
// instructions bit by bit).
constexpr std::array<std::uint16_t, 256> crc16_table = [] {
    std::array<std::uint16_t, 256> table{};
    for (unsigned byte = 0; byte < 256; ++byte) {
        auto crc = static_cast<std::uint16_t>(byte << 8);
        for (int bit = 0; bit < 8; ++bit)
            crc = static_cast<std::uint16_t>(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
        table[byte] = crc;
    }
    return table;
}();

// "host:port" (the host may hold colons: IPv6), an empty host allowed.
std::optional<ServerAddress> parse_address(std::string_view text) {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    std::uint16_t port = 0;
    const auto digits = text.substr(colon + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    return ServerAddress{std::string(text.substr(0, colon)), port};
}

}  // namespace

std::uint16_t crc16(std::string_view data) {
    std::uint16_t crc = 0;
    for (unsigned char byte : data)
        crc = static_cast<std::uint16_t>((crc << 8) ^ crc16_table[((crc >> 8) ^ byte) & 0xff]);
    return crc;
}

std::size_t key_slot(std::string_view key) {
    if (const auto open = key.find('{'); open != std::string_view::npos) {
        const auto close = key.find('}', open + 1);
        if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
    }
    return crc16(key) % cluster_slots;
}

std::optional<Redirect> parse_redirect(const Reply& reply, const ServerAddress& answered) {
    if (!reply.is_error()) return std::nullopt;
    const std::string_view text = reply.str;
    Redirect redirect;
    std::string_view rest;
    if (text.starts_with("MOVED ")) {
        redirect.moved = true;
        rest = text.substr(6);
    } else if (text.starts_with("ASK ")) {
        rest = text.substr(4);
    } else {
        return std::nullopt;
    }
    const auto space = rest.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + space, redirect.slot);
    if (ec != std::errc() || end != rest.data() + space || redirect.slot >= cluster_slots) return std::nullopt;
    auto node = parse_address(rest.substr(space + 1));
    if (!node) return std::nullopt;
    redirect.node = std::move(*node);
    if (redirect.node.host.empty()) redirect.node.host = answered.host;
    return redirect;
}

std::vector<SlotRange> parse_cluster_slots(const Reply& reply, const ServerAddress& asked) {
    std::vector<SlotRange> ranges;
    if (!reply.is_array()) return ranges;
    for (const auto& entry : reply.elements) {
        // first slot, last slot, master [host, port, id...], replicas...
        if (!entry.is_array() || entry.elements.size() < 3) return {};
        const auto& first = entry.elements[0];
        const auto& last = entry.elements[1];
        const auto& master = entry.elements[2];
        if (!first.is_integer() || !last.is_integer() || !master.is_array() || master.elements.size() < 2)
            return {};
        const auto& host = master.elements[0];
        const auto& port = master.elements[1];
        if (!(host.is_nil() || host.type == Reply::Type::string || host.type == Reply::Type::status) ||
            !port.is_integer() || port.integer < 0 || port.integer > 0xffff)
            return {};
        if (first.integer < 0 || first.integer > last.integer ||
            last.integer >= static_cast<long long>(cluster_slots))
            return {};
        SlotRange range;
        range.first = static_cast<std::size_t>(first.integer);
        range.last = static_cast<std::size_t>(last.integer);
        range.master = {host.str.empty() || host.str == "?" ? asked.host : host.str,
                        static_cast<std::uint16_t>(port.integer)};
        ranges.push_back(std::move(range));
    }
    return ranges;
}

ClusterMap::ClusterMap(const std::vector<SlotRange>& ranges) : ClusterMap() { assign(ranges); }

std::optional<ClusterMap::Node> ClusterMap::owner(std::size_t slot) const {
    if (slot >= cluster_slots || slots_[slot] == no_node) return std::nullopt;
    return slots_[slot];
}

std::optional<ClusterMap::Node> ClusterMap::route(std::size_t slot) const {
    if (auto node = owner(slot)) return node;
    // A sample of the slots finds a master of any map with few holes cheaply.
    for (std::size_t s = 0; s < cluster_slots; s += 1024)
        if (slots_[s] != no_node) return slots_[s];
    if (nodes_.empty()) return std::nullopt;
    return Node{0};
}

std::vector<ClusterMap::Node> ClusterMap::masters() const {
    std::vector<bool> seen(nodes_.size());
    std::vector<Node> result;
    for (const Node node : slots_)
        if (node != no_node && !seen[node]) {
            seen[node] = true;
            result.push_back(node);
        }
    return result;
}

ClusterMap::Node ClusterMap::add(const ServerAddress& address) {
    const auto known = std::find(nodes_.begin(), nodes_.end(), address);
    if (known != nodes_.end()) return static_cast<Node>(known - nodes_.begin());
    if (nodes_.size() >= no_node) throw std::length_error("holdfast: more cluster nodes than a slot map can number");
    nodes_.push_back(address);
    return static_cast<Node>(nodes_.size() - 1);
}

bool ClusterMap::assign(const std::vector<SlotRange>& ranges) {
    std::array<Node, cluster_slots> slots;
    slots.fill(no_node);
    for (const auto& range : ranges) {
        const Node node = add(range.master);
        std::fill(slots.begin() + static_cast<std::ptrdiff_t>(range.first),
                  slots.begin() + static_cast<std::ptrdiff_t>(range.last) + 1, node);
    }
    const bool changed = slots != slots_;
    slots_ = slots;
    return changed;
}

ClusterMap::Node ClusterMap::apply_redirect(const Redirect& redirect) {
    const Node node = add(redirect.node);
    if (redirect.moved && redirect.slot < cluster_slots) slots_[redirect.slot] = node;
    return node;
}

}  // namespace holdfast::detail
