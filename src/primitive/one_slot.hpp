// On a Redis Cluster, one script may touch only keys of one slot: a primitive
// whose keys a name would scatter is refused before anything is sent.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "holdfast/config.hpp"

namespace holdfast::detail {

/// Topology::cluster only: throws std::invalid_argument when `keys` (the
/// first is the primitive's own, named `name`) do not all hash to one slot,
/// naming the keys, their slots and what to write instead. A `noun` is
/// "fair lock", "fenced lock" ...
void check_one_slot(const Config& config, std::string_view noun, const std::string& name,
                    const std::vector<std::string>& keys);

/// Whether one script may touch both `a` and `b`: always, but on a cluster,
/// where they must hash to one slot.
bool share_slot(const Config& config, std::string_view a, std::string_view b);

}  // namespace holdfast::detail
