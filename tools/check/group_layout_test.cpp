// The checker's reading of the group lock (MultiValueLock): the holders its
// hash names (group_layout.cpp), the values each hold took, as the history
// notes them, and overlaps judged by shared values, on hand-written histories.
#include <gtest/gtest.h>

#include "group_layout.hpp"
#include "test_history.hpp"

namespace holdfast::check {
namespace {

// Two values' fields (22 characters, as MultiValueLock::field_of gives them).
const std::string field_a = "Zm9vYmFyYmF6cXV4MTIzNA";
const std::string field_b = "cXV1eHh5enp5MTIzNDU2Nw";

std::vector<std::string> hold(const std::string& field, const std::string& owner, const std::string& expires,
                              const std::string& count = "1") {
    return {field, owner, field + ":" + owner + ":expire_time", expires, field + ":" + owner + ":lock_count", count};
}

std::vector<std::string> joined(std::vector<std::vector<std::string>> parts) {
    std::vector<std::string> all;
    for (auto& part : parts) all.insert(all.end(), part.begin(), part.end());
    return all;
}

const std::map<std::string, std::string> names{{field_a, "a"}, {field_b, "b"}};

TEST(GroupHolds, AValueIsHeldByTheOwnerItNamesUntilThatOwnersExpireTime) {
    EXPECT_EQ(group_holds(hold(field_a, "c0:1", "5000"), 4999, names), std::vector<std::string>{"c0:1=a"});
    // At its expire time the value is free: the acquire script takes it over.
    EXPECT_TRUE(group_holds(hold(field_a, "c0:1", "5000"), 5000, names).empty());
    // One owner holding two values: a hold each; a field the names do not know keeps its own.
    EXPECT_EQ(group_holds(joined({hold(field_a, "c0:1", "5000"), hold(field_b, "c0:1", "6000", "2")}), 1000, {}),
              (std::vector<std::string>{"c0:1=" + field_a, "c0:1=" + field_b}));
    EXPECT_EQ(holder_of("c0:1=a"), "c0:1");
}

TEST(GroupHolds, StaleFieldsAndFieldsWithoutTheirOwnersTimeHoldNothing) {
    // b's holder's time passed: its fields stay until someone takes b, and mean nothing.
    EXPECT_EQ(group_holds(joined({hold(field_a, "c1:1", "9000"), hold(field_b, "c0:1", "2000")}), 3000, names),
              std::vector<std::string>{"c1:1=a"});
    // A value naming an owner whose expire time is another owner's (or missing, or no number).
    EXPECT_TRUE(group_holds({field_a, "c0:1", field_a + ":c1:1:expire_time", "9000"}, 3000, names).empty());
    EXPECT_TRUE(group_holds({field_a, "c0:1", field_a + ":c0:1:lock_count", "1"}, 3000, names).empty());
    EXPECT_TRUE(group_holds({field_a, "c0:1", field_a + ":c0:1:expire_time", "soon"}, 3000, names).empty());
    // Only the count and time of a value nobody names: no hold either.
    EXPECT_TRUE(
        group_holds({field_a + ":c0:1:expire_time", "9000", field_a + ":c0:1:lock_count", "1"}, 3000, names).empty());
}

// Worker 0 holds values `first` from 1.010 s to 1.500 s, worker 1 values
// `second` from 1.200 s to 1.300 s: both released ok.
RunResult check_two_group_holds(const std::string& name, const std::string& first, const std::string& second) {
    const std::string dir = fresh_dir(name);
    write_history(dir, {{{1000, 0, 1, "acquire", "invoke", 0, "c0:1 values=" + first}, {1010, 0, 1, "acquire", "ok"},
                         {1500, 0, 1, "release", "invoke"}, {1510, 0, 1, "release", "ok", 0},
                         {1100, 1, 1, "acquire", "invoke", 0, "c1:1 values=" + second}, {1200, 1, 1, "acquire", "ok"},
                         {1300, 1, 1, "release", "invoke"}, {1310, 1, 1, "release", "ok", 0}}});
    RunFacts facts = one_lock_facts(dir);
    facts.primitive = Primitive::group;
    return check_run(facts);
}

TEST(GroupOverlaps, TwoHoldersAtOnceOverlapWhereTheirValuesMeet) {
    const RunResult shared = check_two_group_holds("group-shared", "ab", "bc");
    EXPECT_EQ(shared.overlaps.violations, 1);
    ASSERT_FALSE(shared.findings.empty());
    EXPECT_TRUE(shared.findings[0].starts_with("overlap: two holders of check:lock:0 at once")) << shared.findings[0];
    EXPECT_EQ(check_two_group_holds("group-all", "abc", "c").overlaps.violations, 1);
    EXPECT_EQ(check_two_group_holds("group-apart", "ab", "c").overlaps.violations, 0);
}

// Worker 0 holds values a and b, released ok at 1.210 s; the witness then
// reads `holds` in the group's hash, "<owner>=<value>" each.
RunResult check_group_read(const std::string& name, const std::string& holds) {
    const std::string dir = fresh_dir(name);
    write_history(dir, {{{1000, 0, 1, "acquire", "invoke", 0, "c0:1 values=ab"}, {1010, 0, 1, "acquire", "ok"},
                         {1200, 0, 1, "release", "invoke"}, {1210, 0, 1, "release", "ok", 0}},
                        {},
                        {{1300, 1301, "7000 0 hash 400 -1 0 " + holds}},
                        {"7000 check:lock:0 hash 400 - 0 0 " + holds}});
    RunFacts facts = one_lock_facts(dir);
    facts.primitive = Primitive::group;
    return check_run(facts);
}

// The owner is the acquire note's first word. A value of the released set
// still held by it is a lost release; a value of another set (one whose
// release was refused keeps it to its lease) is not. After the run, a
// worker that exited believing it held nothing is judged by its holds' owner.
TEST(GroupOverlaps, AGroupHoldIsJudgedByTheValuesOfItsSet) {
    const RunResult of_the_set = check_group_read("group-lost", "c0:1=a");
    EXPECT_EQ(of_the_set.lost_releases.violations, 1);
    EXPECT_EQ(of_the_set.unbelieved_holds.violations, 1);
    EXPECT_EQ(check_group_read("group-other-set", "c0:1=c").lost_releases.violations, 0);
    EXPECT_EQ(check_group_read("group-other-owner", "c1:1=a").lost_releases.violations, 0);
}

}  // namespace
}  // namespace holdfast::check
