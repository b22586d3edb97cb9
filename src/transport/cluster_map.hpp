// The Redis Cluster map as a value: which master serves each of the 16384
// slots, a key's slot, and the replies that change the map (CLUSTER SLOTS,
// -MOVED, -ASK). No sockets, no event loop, no mutex: Cluster (cluster.hpp)
// keeps one under its mutex and does the I/O, so the rules are tested here
// without a server.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "holdfast/config.hpp"
#include "transport/reply.hpp"

namespace holdfast::detail {

inline constexpr std::size_t cluster_slots = 16384;

/// CRC16-CCITT (XMODEM), the checksum Redis Cluster hashes keys with.
std::uint16_t crc16(std::string_view data);

/// The slot of `key`: of its hash tag (what is between the first '{' and the
/// next '}', if not empty), else of the whole key.
std::size_t key_slot(std::string_view key);

/// A -MOVED or -ASK error reply: where the slot is (moved) or is being moved (ask).
struct Redirect {
    bool moved = false;
    std::size_t slot = 0;
    ServerAddress node;
    friend bool operator==(const Redirect&, const Redirect&) = default;
};
/// The redirect `reply` is, if it is one; an empty host means the host of
/// the node that `answered`. "host:port" splits at the last colon, so an
/// IPv6 host ("::1:7000") keeps its colons.
std::optional<Redirect> parse_redirect(const Reply& reply, const ServerAddress& answered);

/// The masters of CLUSTER SLOTS' reply, one per slot range (replicas are
/// ignored); an empty, "?" or nil host means the node that was `asked`.
/// Empty if the reply is not a list of well-formed ranges.
struct SlotRange {
    std::size_t first = 0, last = 0;
    ServerAddress master;
    friend bool operator==(const SlotRange&, const SlotRange&) = default;
};
std::vector<SlotRange> parse_cluster_slots(const Reply& reply, const ServerAddress& asked);

/// Slot -> master, over nodes numbered in the order they became known: a
/// node keeps its number for the map's life (Cluster keeps its connections
/// at the same index), even when it no longer serves a slot.
class ClusterMap {
public:
    using Node = std::uint16_t;

    ClusterMap() { slots_.fill(no_node); }
    /// The map CLUSTER SLOTS' `ranges` describe.
    explicit ClusterMap(const std::vector<SlotRange>& ranges);

    static std::size_t slot_of(std::string_view key) { return key_slot(key); }

    /// The node serving `slot`, if the map names one.
    std::optional<Node> owner(std::size_t slot) const;
    /// Where a command for `slot` goes (cluster_slots: any master): its
    /// owner, else a node serving some slot (it answers MOVED with the right
    /// one), else the first node known; none if no node is known.
    std::optional<Node> route(std::size_t slot) const;
    /// Every node serving a slot, once each, in slot order.
    std::vector<Node> masters() const;

    /// The node's number, known from now on.
    Node add(const ServerAddress& address);
    const ServerAddress& address(Node node) const { return nodes_.at(node); }
    std::size_t node_count() const { return nodes_.size(); }

    /// Takes the slots of `ranges` (a fresh CLUSTER SLOTS), every other slot
    /// served by no one; whether a slot changed hands. Known nodes stay known.
    bool assign(const std::vector<SlotRange>& ranges);
    /// A MOVED gives its slot to its node; an ASK changes nothing (the move is
    /// under way). The node the command goes to next.
    Node apply_redirect(const Redirect& redirect);

    friend bool operator==(const ClusterMap&, const ClusterMap&) = default;

private:
    static constexpr Node no_node = 0xffff;
    std::array<Node, cluster_slots> slots_;
    std::vector<ServerAddress> nodes_;
};

}  // namespace holdfast::detail
