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
/// ledger is what the caller knows, so a release can tell the server's extra
/// holds from real ones and give them back too (primitive/release_verdict.hpp),
/// instead of leaving the lock held (and renewed) for ever.
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

    /// Holds of `field` callers were told of and have not given back; 0 if none.
    std::int64_t known(const std::string& key, const std::string& field) const {
        std::lock_guard lock(mutex_);
        const auto it = counts_.find({key, field});
        return it == counts_.end() ? 0 : it->second.count;
    }

    /// One hold given back (`all`: every hold, the server says none is left).
    /// Returns how long since the first of them was taken, if any was known.
    std::optional<Clock::duration> given_back(const std::string& key, const std::string& field, bool all) {
        std::lock_guard lock(mutex_);
        const auto it = counts_.find({key, field});
        if (it == counts_.end()) return std::nullopt;
        const Clock::duration held_for = Clock::now() - it->second.since;
        if (all || --it->second.count == 0) counts_.erase(it);
        return held_for;
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
