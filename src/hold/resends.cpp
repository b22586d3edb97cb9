#include "hold/resends.hpp"

#include <vector>

namespace holdfast::detail {

void Resends::changed() {
    size_.store(pending_.size(), std::memory_order_release);
    changed_.notify_all();
}

Resends::Id Resends::add(const std::string& key, const std::string& field, std::function<void()> hurry) {
    std::lock_guard lock(mutex_);
    // An older re-send of the hold is replaced, and the acquires it counted
    // were the owner's before this release: they do not pause this one.
    Pending& pending = pending_[{key, field}];
    pending = {next_id_++, 0, std::move(hurry)};
    changed();
    return pending.id;
}

Resends::Id Resends::acquiring(const std::string& key, const std::string& field) {
    // The common case, every acquire: nothing pending, no lock taken. A
    // release that registered its re-send did so before its caller was told,
    // so the owner's next acquire sees it here.
    if (size() == 0) return 0;
    std::lock_guard lock(mutex_);
    const auto it = pending_.find({key, field});
    if (it == pending_.end()) return 0;
    ++it->second.acquiring;
    return it->second.id;
}

void Resends::acquire_ended(const std::string& key, const std::string& field, Id id, bool took) {
    if (id == 0) return;
    std::lock_guard lock(mutex_);
    const auto it = pending_.find({key, field});
    if (it == pending_.end() || it->second.id != id) return;  // replaced or over meanwhile
    --it->second.acquiring;
    if (took) pending_.erase(it);
    changed();
}

Resends::Turn Resends::send(const std::string& key, const std::string& field, Id id,
                            const std::function<void()>& send) {
    std::lock_guard lock(mutex_);
    const auto it = pending_.find({key, field});
    if (it == pending_.end() || it->second.id != id) return Turn::dropped;
    if (it->second.acquiring > 0) return Turn::paused;
    // Under the lock: an acquire that starts from here on is submitted after it.
    send();
    return Turn::sent;
}

void Resends::finished(const std::string& key, const std::string& field, Id id) {
    std::lock_guard lock(mutex_);
    const auto it = pending_.find({key, field});
    if (it != pending_.end() && it->second.id == id) pending_.erase(it);
    changed();
}

void Resends::hurry_all() {
    hurried_.store(true, std::memory_order_relaxed);
    std::vector<std::function<void()>> hurries;
    {
        std::lock_guard lock(mutex_);
        for (const auto& [hold, pending] : pending_)
            if (pending.hurry) hurries.push_back(pending.hurry);
    }
    for (const auto& hurry : hurries) hurry();
}

bool Resends::settle(std::chrono::steady_clock::time_point until) {
    std::unique_lock lock(mutex_);
    return changed_.wait_until(lock, until, [this] {
        for (const auto& [hold, pending] : pending_)
            if (pending.acquiring == 0) return false;
        return true;
    });
}

}  // namespace holdfast::detail
