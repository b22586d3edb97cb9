// On a cluster one script touches keys of one slot only (primitive/
// one_slot.hpp): a name whose keys would fall in several slots is refused
// before anything is sent, naming the keys, their slots and the fix. No server.
#include "primitive/one_slot.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "transport/cluster_map.hpp"

namespace holdfast::detail {
namespace {

Config cluster() {
    Config config;
    config.topology = Topology::cluster;
    config.servers = {{"127.0.0.1", 7000}};
    return config;
}

// A fair lock's keys, as Redisson names them: its own, its queue and its timeouts.
std::vector<std::string> fair_keys(const std::string& name) {
    const bool tagged = name.find('{') != std::string::npos || name.find('}') != std::string::npos;
    const std::string suffix = tagged ? name : "{" + name + "}";
    return {name, "redisson_lock_queue:" + suffix, "redisson_lock_timeout:" + suffix};
}

TEST(CheckOneSlot, AcceptsANameWhoseKeysShareItsSlot) {
    EXPECT_NO_THROW(check_one_slot(cluster(), "fair lock", "orders", fair_keys("orders")));
    EXPECT_NO_THROW(check_one_slot(cluster(), "fair lock", "{tenant-7}:orders", fair_keys("{tenant-7}:orders")));
    EXPECT_NO_THROW(check_one_slot(cluster(), "fair lock", "x", {}));
}

// "{}x": an empty tag is no tag, so each key hashes whole and the two fall
// in different slots: refused, naming both and how to name it instead.
TEST(CheckOneSlot, RefusesANameWhoseKeysFallInTwoSlotsNamingThem) {
    const std::vector<std::string> keys{"{}x", "redisson_lock_queue:{}x"};
    ASSERT_NE(key_slot(keys[0]), key_slot(keys[1]));
    try {
        check_one_slot(cluster(), "fair lock", "{}x", keys);
        ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        for (const std::string& part :
             {std::string("the fair lock name '{}x' cannot be used on a Redis Cluster"),
              "its keys '{}x' (slot " + std::to_string(key_slot(keys[0])) + ")",
              "and 'redisson_lock_queue:{}x' (slot " + std::to_string(key_slot(keys[1])) + ")",
              std::string("'{tenant-7}:orders'"), std::string("docs/deployments.md")})
            EXPECT_NE(what.find(part), std::string::npos) << part << "\n in: " << what;
    }
}

// The first key that strays is named, after keys that agree.
TEST(CheckOneSlot, NamesTheFirstKeyThatStrays) {
    const std::vector<std::string> keys{"{a}1", "{a}2", "{b}3", "{c}4"};
    try {
        check_one_slot(cluster(), "semaphore", "{a}1", keys);
        ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("and '{b}3' (slot " + std::to_string(key_slot("{b}3")) + ")"),
                  std::string::npos)
            << e.what();
    }
}

TEST(CheckOneSlot, OnlyACareForACluster) {
    const std::vector<std::string> keys{"{a}1", "{b}2"};
    Config single;
    EXPECT_NO_THROW(check_one_slot(single, "fair lock", "x", keys));
    Config sentinel;
    sentinel.topology = Topology::sentinel;
    EXPECT_NO_THROW(check_one_slot(sentinel, "fair lock", "x", keys));
    EXPECT_THROW(check_one_slot(cluster(), "fair lock", "x", keys), std::invalid_argument);
}

TEST(ShareSlot, AlwaysButOnAClusterWhereTheSlotsMustAgree) {
    EXPECT_TRUE(share_slot(cluster(), "orders", "redisson_lock__channel:{orders}"));
    EXPECT_FALSE(share_slot(cluster(), "{a}x", "{b}x"));
    EXPECT_TRUE(share_slot(Config{}, "{a}x", "{b}x"));
}

}  // namespace
}  // namespace holdfast::detail
