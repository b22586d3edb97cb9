// The sets of a group each owner was told it took: an index into the
// HoldLedger, which counts them. A release of one set tells the script how
// many holds the owner keeps on each of its values (release.lua), and those
// counts come from the owner's other sets.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace holdfast::detail {

/// Thread safety: any thread.
class OwnerSets {
public:
    /// `owner` was told it took the set named `hold` (`<fields>:<owner>`) of `group`.
    void taken(const std::string& group, const std::string& owner, const std::string& hold);

    /// The owner's sets of `group` with their counts: those `counted` (the
    /// ledger) still knows of; the rest are forgotten here.
    using Counted = std::function<std::int64_t(const std::string& hold)>;
    std::vector<std::pair<std::string, std::int64_t>> of(const std::string& group, const std::string& owner,
                                                         const Counted& counted);

private:
    std::mutex mutex_;
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> sets_;  // (group, owner) -> hold names
};

}  // namespace holdfast::detail
