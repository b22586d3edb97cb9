// The index of each owner's sets of a group: what a release counts the
// owner's other holds by, and what it forgets once the ledger does.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "multi_value_lock/owner_sets.hpp"

namespace holdfast::testing {
namespace {

using Found = std::vector<std::pair<std::string, std::int64_t>>;

TEST(GroupOwnerSets, ListsTheOwnersSetsOfTheGroupOnceEachWithTheLedgersCounts) {
    detail::OwnerSets sets;
    sets.taken("flight", "o1", "AB:o1");
    sets.taken("flight", "o1", "AB:o1");  // re-entered: one name, the ledger counts it
    sets.taken("flight", "o1", "BC:o1");
    sets.taken("flight", "o2", "AB:o2");
    sets.taken("train", "o1", "AB:o1");
    std::map<std::string, std::int64_t> ledger{{"AB:o1", 2}, {"BC:o1", 1}};
    const auto counted = [&](const std::string& hold) { return ledger.contains(hold) ? ledger.at(hold) : 0; };
    EXPECT_EQ(sets.of("flight", "o1", counted), (Found{{"AB:o1", 2}, {"BC:o1", 1}}));
    ledger.erase("AB:o1");  // released: forgotten at the next look
    EXPECT_EQ(sets.of("flight", "o1", counted), (Found{{"BC:o1", 1}}));
    ledger.erase("BC:o1");
    EXPECT_EQ(sets.of("flight", "o1", counted), Found{});
    ledger["AB:o1"] = 1;  // counted again, but no longer indexed: only taken() indexes
    EXPECT_EQ(sets.of("flight", "o1", counted), Found{});
    EXPECT_EQ(sets.of("flight", "o3", counted), Found{});
}

}  // namespace
}  // namespace holdfast::testing
