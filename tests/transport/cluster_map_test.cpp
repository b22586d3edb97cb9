// The cluster map without a server: key slots (hash tags as the Redis Cluster
// specification defines them), MOVED and ASK replies, CLUSTER SLOTS replies,
// and the slot -> master map they build and change.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "transport/cluster_map.hpp"

// Failures name the addresses, not their bytes.
namespace holdfast {
void PrintTo(const ServerAddress& address, std::ostream* out) { *out << address.name(); }
namespace detail {
void PrintTo(const Redirect& r, std::ostream* out) {
    *out << (r.moved ? "MOVED " : "ASK ") << r.slot << ' ' << r.node.name();
}
void PrintTo(const SlotRange& r, std::ostream* out) { *out << r.first << '-' << r.last << ' ' << r.master.name(); }
}  // namespace detail
}  // namespace holdfast

namespace holdfast::testing {
namespace cluster_map_replies {
namespace {

using detail::ClusterMap;
using detail::Reply;
using detail::SlotRange;

Reply integer(long long value) { return {Reply::Type::integer, value, {}, {}}; }
Reply bulk(std::string text) { return {Reply::Type::string, 0, std::move(text), {}}; }
Reply error(std::string text) { return {Reply::Type::error, 0, std::move(text), {}}; }
Reply nil() { return {}; }
Reply array(std::vector<Reply> elements) { return {Reply::Type::array, 0, {}, std::move(elements)}; }

// One CLUSTER SLOTS entry: first, last, master, replicas (each host, port, node id).
Reply entry(long long first, long long last, Reply host, long long port, std::vector<Reply> replicas = {}) {
    Reply master = array({std::move(host), integer(port), bulk("a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2")});
    std::vector<Reply> elements{integer(first), integer(last), std::move(master)};
    for (auto& replica : replicas) elements.push_back(std::move(replica));
    return array(std::move(elements));
}
Reply replica(std::string host, long long port) {
    return array({bulk(std::move(host)), integer(port), bulk("f6e5d4c3b2a1f6e5d4c3b2a1f6e5d4c3b2a1f6e5")});
}

const ServerAddress asked{"10.0.0.9", 7009};

std::size_t whole_key_slot(std::string_view key) { return detail::crc16(key) % detail::cluster_slots; }

TEST(ClusterMapSlots, Crc16IsTheSpecificationsChecksum) {
    // The check value the Redis Cluster specification publishes for its CRC16 (XMODEM).
    EXPECT_EQ(detail::crc16("123456789"), 0x31C3);
    EXPECT_EQ(detail::crc16(""), 0);
}

TEST(ClusterMapSlots, KeySlotsAsARedisServerComputesThem) {
    // CLUSTER KEYSLOT's answers (redis-server 7.0.15, cluster-enabled).
    EXPECT_EQ(detail::key_slot("foo"), 12182u);
    EXPECT_EQ(detail::key_slot("somekey"), 11058u);
    EXPECT_EQ(detail::key_slot("foo{hash_tag}"), 2515u);
    EXPECT_EQ(detail::key_slot("{}"), 15257u);
    EXPECT_EQ(detail::key_slot("a{b"), 13340u);
    EXPECT_EQ(detail::key_slot("a}b"), 7866u);
    EXPECT_EQ(detail::key_slot("x}{y"), 9970u);
    EXPECT_EQ(detail::key_slot("foo{}{bar}"), 8363u);
    EXPECT_EQ(detail::key_slot("foo{{bar}}zap"), 4015u);
    EXPECT_EQ(detail::key_slot("{a}{b}"), 15495u);
    EXPECT_EQ(detail::key_slot(""), 0u);
    EXPECT_EQ(ClusterMap::slot_of("foo"), 12182u);
}

TEST(ClusterMapSlots, HashTagsFollowTheSpecification) {
    // The tag is what lies between the first '{' and the first '}' after it, if not empty.
    EXPECT_EQ(detail::key_slot("{user1000}.following"), detail::key_slot("user1000"));
    EXPECT_EQ(detail::key_slot("{user1000}.followers"), detail::key_slot("{user1000}.following"));
    EXPECT_EQ(detail::key_slot("redisson_lock__channel:{orders}"), detail::key_slot("orders"));
    EXPECT_EQ(detail::key_slot("foo{bar}{zap}"), detail::key_slot("bar"));    // the first tag only
    EXPECT_EQ(detail::key_slot("foo{{bar}}zap"), detail::key_slot("{bar"));   // from the first '{'
    EXPECT_EQ(detail::key_slot("{a}{b}"), detail::key_slot("a"));
    // No tag: the whole key.
    for (const std::string_view key : {"foo{}{bar}", "{}", "a{b", "a}b", "x}{y", "{", "}", "}{"})
        EXPECT_EQ(detail::key_slot(key), whole_key_slot(key)) << key;
    EXPECT_NE(detail::key_slot("foo{}{bar}"), detail::key_slot("bar"));
}

TEST(ClusterMapRedirect, MovedAndAsk) {
    auto moved = detail::parse_redirect(error("MOVED 3999 127.0.0.1:6381"), asked);
    ASSERT_TRUE(moved);
    EXPECT_EQ(*moved, (detail::Redirect{true, 3999, {"127.0.0.1", 6381}}));
    auto ask = detail::parse_redirect(error("ASK 0 node-2.example:30002"), asked);
    ASSERT_TRUE(ask);
    EXPECT_EQ(*ask, (detail::Redirect{false, 0, {"node-2.example", 30002}}));
    auto last = detail::parse_redirect(error("MOVED 16383 127.0.0.1:7000"), asked);
    ASSERT_TRUE(last);
    EXPECT_EQ(last->slot, 16383u);
}

TEST(ClusterMapRedirect, Ipv6HostKeepsItsColons) {
    auto moved = detail::parse_redirect(error("MOVED 3999 ::1:7000"), asked);
    ASSERT_TRUE(moved);
    EXPECT_EQ(moved->node, (ServerAddress{"::1", 7000}));
    EXPECT_EQ(moved->node.name(), "[::1]:7000");
    auto ask = detail::parse_redirect(error("ASK 12 fe80::1:2:30001"), asked);
    ASSERT_TRUE(ask);
    EXPECT_EQ(ask->node, (ServerAddress{"fe80::1:2", 30001}));
}

TEST(ClusterMapRedirect, EmptyHostIsTheNodeThatAnswered) {
    // Redis sends ":port" where the node does not know its own address.
    auto moved = detail::parse_redirect(error("MOVED 3999 :7000"), asked);
    ASSERT_TRUE(moved);
    EXPECT_EQ(moved->node, (ServerAddress{"10.0.0.9", 7000}));
    auto ask = detail::parse_redirect(error("ASK 5 :7001"), ServerAddress{"::1", 7005});
    ASSERT_TRUE(ask);
    EXPECT_EQ(ask->node, (ServerAddress{"::1", 7001}));
}

TEST(ClusterMapRedirect, AnythingElseIsNoRedirect) {
    for (const char* text : {"ERR no", "MOVED", "MOVED ", "MOVED 3999", "MOVED 3999 ", "MOVED 16384 127.0.0.1:7000",
                             "MOVED -1 127.0.0.1:7000", "MOVED 12x 127.0.0.1:7000", "MOVED  127.0.0.1:7000",
                             "MOVED 3999 127.0.0.1", "MOVED 3999 127.0.0.1:", "MOVED 3999 127.0.0.1:70000",
                             "MOVED 3999 127.0.0.1:7000x", "MOVED 3999 127.0.0.1:-1", "ASK", "ASK 1", "ASKING 1 h:1",
                             "moved 3999 127.0.0.1:7000", "TRYAGAIN Multiple keys request during rehashing of slot"})
        EXPECT_FALSE(detail::parse_redirect(error(text), asked)) << text;
    // The text of a redirect, but not an error reply (a value a script returned).
    EXPECT_FALSE(detail::parse_redirect(bulk("MOVED 3999 127.0.0.1:7000"), asked));
    EXPECT_FALSE(detail::parse_redirect(Reply{Reply::Type::status, 0, "ASK 1 127.0.0.1:7000", {}}, asked));
}

TEST(ClusterMapSlotsReply, MastersOfEachRangeReplicasIgnored) {
    const Reply reply = array({
        entry(0, 5460, bulk("127.0.0.1"), 30001, {replica("127.0.0.1", 30004)}),
        entry(5461, 10922, bulk("::1"), 30002, {replica("127.0.0.1", 30005), replica("127.0.0.1", 30006)}),
        entry(10923, 16383, bulk("node-3.example"), 30003),
    });
    const std::vector<SlotRange> expected{{0, 5460, {"127.0.0.1", 30001}},
                                          {5461, 10922, {"::1", 30002}},
                                          {10923, 16383, {"node-3.example", 30003}}};
    EXPECT_EQ(detail::parse_cluster_slots(reply, asked), expected);
}

TEST(ClusterMapSlotsReply, RedisSevenNetworkingMetadataIsIgnored) {
    // Redis 7 adds a map (an array in RESP2) of hostname and the like after the node id.
    Reply master = array({bulk("127.0.0.1"), integer(30001), bulk("id"), array({bulk("hostname"), bulk("n1")})});
    const Reply reply = array({array({integer(0), integer(16383), std::move(master)})});
    EXPECT_EQ(detail::parse_cluster_slots(reply, asked),
              (std::vector<SlotRange>{{0, 16383, {"127.0.0.1", 30001}}}));
}

TEST(ClusterMapSlotsReply, UnknownHostIsTheNodeAsked) {
    // "" (same endpoint as asked), "?" (unknown endpoint) and nil: the host asked, the port given.
    const Reply reply = array({entry(0, 99, bulk(""), 30001), entry(100, 199, bulk("?"), 30002),
                               entry(200, 16383, nil(), 30003)});
    const std::vector<SlotRange> expected{{0, 99, {"10.0.0.9", 30001}},
                                          {100, 199, {"10.0.0.9", 30002}},
                                          {200, 16383, {"10.0.0.9", 30003}}};
    EXPECT_EQ(detail::parse_cluster_slots(reply, asked), expected);
}

TEST(ClusterMapSlotsReply, NoSlotsYet) {
    // A node whose cluster is not created yet answers an empty list.
    EXPECT_TRUE(detail::parse_cluster_slots(array({}), asked).empty());
}

TEST(ClusterMapSlotsReply, MalformedRepliesGiveNoMap) {
    const Reply good = entry(0, 16383, bulk("127.0.0.1"), 30001);
    const std::vector<std::pair<std::string, Reply>> malformed{
        {"an error", error("ERR This instance has cluster support disabled")},
        {"nil", nil()},
        {"a string", bulk("0 16383 127.0.0.1 30001")},
        {"an entry not a list", array({good, integer(3)})},
        {"an entry without a master", array({array({integer(0), integer(16383)})})},
        {"a slot as text", array({array({bulk("0"), integer(16383), array({bulk("h"), integer(1)})})})},
        {"the last slot as text", array({array({integer(0), bulk("16383"), array({bulk("h"), integer(1)})})})},
        {"first after last", array({entry(100, 99, bulk("h"), 1)})},
        {"slot 16384", array({entry(0, 16384, bulk("h"), 1)})},
        {"a negative first slot", array({entry(-1, 10, bulk("h"), 1)})},
        {"a negative range", array({entry(-10, -1, bulk("h"), 1)})},
        {"a master not a list", array({array({integer(0), integer(16383), bulk("127.0.0.1:30001")})})},
        {"a master without a port", array({array({integer(0), integer(16383), array({bulk("h")})})})},
        {"a port as text", array({array({integer(0), integer(16383), array({bulk("h"), bulk("30001")})})})},
        {"a negative port", array({entry(0, 16383, bulk("h"), -1)})},
        {"port 65536", array({entry(0, 16383, bulk("h"), 65536)})},
        {"a host as a number", array({entry(0, 16383, integer(127), 30001)})},
        {"a host as a list", array({entry(0, 16383, array({}), 30001)})},
    };
    for (const auto& [what, reply] : malformed) EXPECT_TRUE(detail::parse_cluster_slots(reply, asked).empty()) << what;
    // One bad entry spoils the reply: a map with holes is worse than the one the client has.
    EXPECT_TRUE(detail::parse_cluster_slots(array({good, entry(5, 1, bulk("h"), 1)}), asked).empty());
}

std::vector<SlotRange> three_masters() {
    return {{0, 5460, {"127.0.0.1", 30001}}, {5461, 10922, {"127.0.0.1", 30002}}, {10923, 16383, {"127.0.0.1", 30003}}};
}

TEST(ClusterMap, OwnersOfEachRange) {
    const ClusterMap map(three_masters());
    ASSERT_EQ(map.node_count(), 3u);
    EXPECT_EQ(map.owner(0), 0);
    EXPECT_EQ(map.owner(5460), 0);
    EXPECT_EQ(map.owner(5461), 1);
    EXPECT_EQ(map.owner(10922), 1);
    EXPECT_EQ(map.owner(10923), 2);
    EXPECT_EQ(map.owner(16383), 2);
    EXPECT_EQ(map.owner(detail::cluster_slots), std::nullopt);
    EXPECT_EQ(map.address(*map.owner(ClusterMap::slot_of("foo"))), (ServerAddress{"127.0.0.1", 30003}));
    EXPECT_EQ(map.masters(), (std::vector<ClusterMap::Node>{0, 1, 2}));
}

TEST(ClusterMap, MastersOnceEachInSlotOrder) {
    // Redis lists a master once per range; a master with two ranges is one master.
    const ClusterMap map({{0, 99, {"b", 2}}, {100, 199, {"a", 1}}, {200, 16383, {"b", 2}}});
    EXPECT_EQ(map.node_count(), 2u);
    EXPECT_EQ(map.masters(), (std::vector<ClusterMap::Node>{0, 1}));
    EXPECT_EQ(map.address(0), (ServerAddress{"b", 2}));
}

TEST(ClusterMap, HolesRouteToSomeMaster) {
    // Slots 0-99 unserved: a command for them goes to a master, which answers MOVED.
    const ClusterMap map({{100, 16383, {"127.0.0.1", 30002}}});
    EXPECT_EQ(map.owner(50), std::nullopt);
    EXPECT_EQ(map.route(50), 0);
    EXPECT_EQ(map.route(detail::cluster_slots), 0);  // keyless: any master
    EXPECT_EQ(map.route(200), map.owner(200));
}

TEST(ClusterMap, RouteWithoutSlots) {
    ClusterMap map;
    EXPECT_EQ(map.route(0), std::nullopt);  // nothing known: nowhere to send
    EXPECT_TRUE(map.masters().empty());
    const auto seed = map.add({"127.0.0.1", 30001});
    EXPECT_EQ(map.route(0), seed);  // a seed, before its map is read
    EXPECT_TRUE(map.masters().empty());
}

TEST(ClusterMap, NodesKeepTheirNumbers) {
    ClusterMap map;
    EXPECT_EQ(map.add({"seed", 1}), 0);
    EXPECT_TRUE(map.assign(three_masters()));
    EXPECT_EQ(map.node_count(), 4u);
    EXPECT_EQ(map.add({"127.0.0.1", 30002}), 2);  // known: its number, not a new one
    // A failover: 30002's slots go to 30005; 30002 is no master but keeps number 2.
    auto after = three_masters();
    after[1].master = {"127.0.0.1", 30005};
    EXPECT_TRUE(map.assign(after));
    EXPECT_EQ(map.node_count(), 5u);
    EXPECT_EQ(map.address(2), (ServerAddress{"127.0.0.1", 30002}));
    EXPECT_EQ(map.owner(6000), 4);
    EXPECT_EQ(map.masters(), (std::vector<ClusterMap::Node>{1, 4, 3}));
}

TEST(ClusterMap, AssignTellsWhetherASlotChangedHands) {
    ClusterMap map;
    EXPECT_TRUE(map.assign(three_masters()));
    EXPECT_FALSE(map.assign(three_masters()));
    auto split = three_masters();  // the same owners in other ranges
    split.insert(split.begin() + 1, {5461, 6000, {"127.0.0.1", 30002}});
    split[2].first = 6001;
    EXPECT_FALSE(map.assign(split));
    EXPECT_TRUE(map.assign({{0, 16383, {"127.0.0.1", 30001}}}));
    EXPECT_TRUE(map.assign({}));  // a map read as empty serves nothing
    EXPECT_EQ(map.owner(0), std::nullopt);
}

TEST(ClusterMap, MovedGivesTheSlotAway) {
    ClusterMap map(three_masters());
    const ClusterMap before = map;
    auto moved = detail::parse_redirect(error("MOVED 3999 127.0.0.1:30002"), {"127.0.0.1", 30001});
    ASSERT_TRUE(moved);
    EXPECT_EQ(map.apply_redirect(*moved), 1);
    EXPECT_EQ(map.owner(3999), 1);
    EXPECT_EQ(map.owner(3998), 0);  // one slot, not the range
    EXPECT_EQ(map.owner(4000), 0);
    EXPECT_NE(map, before);
    // To a node not known yet: it is known from now on.
    auto elsewhere = detail::parse_redirect(error("MOVED 10 :30007"), {"127.0.0.1", 30001});
    ASSERT_TRUE(elsewhere);
    EXPECT_EQ(map.apply_redirect(*elsewhere), 3);
    EXPECT_EQ(map.address(3), (ServerAddress{"127.0.0.1", 30007}));
    EXPECT_EQ(map.owner(10), 3);
}

TEST(ClusterMap, AskChangesNothing) {
    ClusterMap map(three_masters());
    const ClusterMap before = map;
    auto ask = detail::parse_redirect(error("ASK 3999 127.0.0.1:30002"), {"127.0.0.1", 30001});
    ASSERT_TRUE(ask);
    EXPECT_EQ(map.apply_redirect(*ask), 1);  // where this command goes, once
    EXPECT_EQ(map, before);
    EXPECT_EQ(map.owner(3999), 0);
}

TEST(ClusterMap, IsAValue) {
    const ClusterMap original(three_masters());
    ClusterMap copy = original;
    EXPECT_EQ(copy, original);
    copy.assign({{0, 16383, {"127.0.0.1", 30001}}});
    EXPECT_EQ(original.owner(16383), 2);
    EXPECT_EQ(copy.owner(16383), 0);
}

}  // namespace
}  // namespace cluster_map_replies
}  // namespace holdfast::testing
