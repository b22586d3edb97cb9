#include "primitive/one_slot.hpp"

#include <stdexcept>

#include "common/quoted.hpp"
#include "transport/cluster_map.hpp"

namespace holdfast::detail {

void check_one_slot(const Config& config, std::string_view noun, const std::string& name,
                    const std::vector<std::string>& keys) {
    if (config.topology != Topology::cluster || keys.empty()) return;
    const std::size_t slot = key_slot(keys.front());
    for (const std::string& key : keys) {
        if (key_slot(key) == slot) continue;
        throw std::invalid_argument(
            "holdfast: the " + std::string(noun) + " name " + quoted(name) +
            " cannot be used on a Redis Cluster: its keys " + quoted(keys.front()) + " (slot " +
            std::to_string(slot) + ") and " + quoted(key) + " (slot " + std::to_string(key_slot(key)) +
            ") fall in different slots, and one script must touch both. Braces decide a key's slot: use a name "
            "without '{' or '}' ('orders:42'), or one with a non-empty hash tag that every key keeps "
            "('{tenant-7}:orders'); docs/deployments.md, \"Names on a cluster\"");
    }
}

bool share_slot(const Config& config, std::string_view a, std::string_view b) {
    return config.topology != Topology::cluster || key_slot(a) == key_slot(b);
}

}  // namespace holdfast::detail
