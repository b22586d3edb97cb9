#include "semaphore/channel.hpp"

#include "primitive/count.hpp"
#include "primitive/wait_queue.hpp"

namespace holdfast::detail {

std::size_t semaphore_wakes(std::string_view payload) {
    const auto permits = parse_count(payload);
    if (!permits) return wakes::all;
    return *permits > 0 ? static_cast<std::size_t>(*permits) : 0;
}

}  // namespace holdfast::detail
