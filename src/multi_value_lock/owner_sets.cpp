#include "multi_value_lock/owner_sets.hpp"

#include <algorithm>

namespace holdfast::detail {

void OwnerSets::taken(const std::string& group, const std::string& owner, const std::string& hold) {
    const std::lock_guard guard(mutex_);
    auto& holds = sets_[{group, owner}];
    if (std::find(holds.begin(), holds.end(), hold) == holds.end()) holds.push_back(hold);
}

std::vector<std::pair<std::string, std::int64_t>> OwnerSets::of(const std::string& group, const std::string& owner,
                                                                const Counted& counted) {
    std::vector<std::pair<std::string, std::int64_t>> found;
    const std::lock_guard guard(mutex_);
    const auto it = sets_.find({group, owner});
    if (it == sets_.end()) return found;
    std::erase_if(it->second, [&](const std::string& hold) {
        const std::int64_t count = counted(hold);
        if (count > 0) found.emplace_back(hold, count);
        return count <= 0;
    });
    if (it->second.empty()) sets_.erase(it);
    return found;
}

}  // namespace holdfast::detail
