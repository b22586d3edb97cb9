// Config::nat_map applied: where to connect for an address a server announced
// (or the user gave), as Redisson's natMapper maps it.
#pragma once

#include "holdfast/config.hpp"

namespace holdfast::detail {

/// The reachable address of the first mapping that matches `address` (same
/// host, and the same port or port 0), its port kept where the mapping's is 0;
/// `address` itself when none does.
inline ServerAddress nat_mapped(const std::vector<NatMapping>& map, const ServerAddress& address) {
    for (const NatMapping& m : map)
        if (m.announced.host == address.host && (m.announced.port == 0 || m.announced.port == address.port))
            return {m.reachable.host, m.reachable.port == 0 ? address.port : m.reachable.port};
    return address;
}

}  // namespace holdfast::detail
