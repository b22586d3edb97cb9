#include "multi_lock/lost_watches.hpp"

#include <algorithm>

namespace holdfast::detail {

std::stop_token LostWatches::token(const std::string& key, std::vector<std::stop_token> members) {
    std::unique_ptr<Watch> stale;  // destroyed outside the mutex: its callbacks may be running user code
    std::lock_guard lock(mutex_);
    auto it = watches_.find(key);
    if (it != watches_.end()) {
        if (it->second->source.stop_requested() || it->second->members == members)
            return it->second->source.get_token();
        stale = std::move(it->second);
        watches_.erase(it);
    }
    if (std::ranges::any_of(members, [](const std::stop_token& t) { return !t.stop_possible(); }))
        return std::stop_token{};
    auto watch = std::make_unique<Watch>();
    watch->members = std::move(members);
    for (const auto& member : watch->members)
        watch->callbacks.push_back(std::make_unique<std::stop_callback<std::function<void()>>>(
            member, std::function<void()>([source = watch->source]() mutable { source.request_stop(); })));
    auto token = watch->source.get_token();
    watches_.emplace(key, std::move(watch));
    return token;
}

void LostWatches::forget(const std::string& key, const std::vector<std::stop_token>& members) {
    std::unique_ptr<Watch> gone;
    std::lock_guard lock(mutex_);
    auto it = watches_.find(key);
    if (it == watches_.end() || (it->second->members == members && !it->second->source.stop_requested())) return;
    gone = std::move(it->second);
    watches_.erase(it);
}

}  // namespace holdfast::detail
