// The holds a client has told its callers they took, per key and hold field.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace holdfast::detail {

/// An acquire whose reply is lost (a timeout, a dropped connection) may have
/// run: the server then counts one hold more than the caller knows of. The
/// ledger is what the caller knows, so an unlock can tell the server's extra
/// holds from real ones and give them back too, instead of leaving the lock
/// held (and renewed) for ever.
///
/// Thread safety: any thread.
class HoldLedger {
public:
    using Clock = std::chrono::steady_clock;

    void taken(const std::string& key, const std::string& field) {
        std::lock_guard lock(mutex_);
        Holds& holds = counts_[{key, field}];
        if (holds.count++ == 0) holds.since = Clock::now();
    }

    /// One hold given back (or its unlock's outcome unknown). Returns the holds
    /// still known, or nullopt if none was: this client never took it.
    /// `held_for`, if given, is set to the time since the first of them.
    std::optional<std::int64_t> given_back(const std::string& key, const std::string& field,
                                           Clock::duration* held_for = nullptr) {
        std::lock_guard lock(mutex_);
        auto it = counts_.find({key, field});
        if (it == counts_.end()) return std::nullopt;
        if (held_for) *held_for = Clock::now() - it->second.since;
        const std::int64_t left = --it->second.count;
        if (left == 0) counts_.erase(it);
        return left;
    }

    /// Whether callers were told of any hold of `field` still held.
    bool known(const std::string& key, const std::string& field) const {
        std::lock_guard lock(mutex_);
        return counts_.contains({key, field});
    }

    /// The server says `field` holds nothing: forget its holds.
    void forget(const std::string& key, const std::string& field) {
        std::lock_guard lock(mutex_);
        counts_.erase({key, field});
    }

    /// Keys and fields with holds (tests check nothing is left behind).
    std::size_t size() const {
        std::lock_guard lock(mutex_);
        return counts_.size();
    }

private:
    struct Holds {
        std::int64_t count = 0;
        Clock::time_point since;  // of the first hold still known
    };
    mutable std::mutex mutex_;
    std::map<std::pair<std::string, std::string>, Holds> counts_;
};

}  // namespace holdfast::detail
