// inspect() of a multi-value lock's group: each value held by its field,
// owner, hold count and expire time, whoever wrote it (holdfast or a
// Redisson peer); a hash of another shape stays what it was.
#include <algorithm>

#include "inspect/layouts.hpp"
#include "multi_value_lock/field.hpp"
#include "redis_fixture.hpp"
#include "redisson_peer.hpp"

namespace holdfast::testing {
namespace {

using InspectGroup = RedisTest;

TEST_F(InspectGroup, ShowsEachValueItsOwnerCountAndExpiry) {
    Client client(config());
    MultiValueLock seats(client, "flight", {"12A", "12B"});
    seats.lock();
    seats.lock();
    const auto now = std::chrono::system_clock::now();
    const LockState state = inspect(client, "flight");
    EXPECT_EQ(state.kind, LockState::Kind::multi_value_lock);
    EXPECT_EQ(state.type, "hash");
    ASSERT_TRUE(state.ttl);
    EXPECT_TRUE(state.holders.empty());
    ASSERT_EQ(state.values.size(), 2u);
    std::vector<std::string> fields;
    for (const auto& held : state.values) {
        fields.push_back(held.field);
        EXPECT_EQ(held.owner, client.current_owner());
        EXPECT_EQ(held.hold_count, 2);
        ASSERT_TRUE(held.expires);
        EXPECT_GT(*held.expires, now + 25s);
        EXPECT_LE(*held.expires, now + 31s);
    }
    std::sort(fields.begin(), fields.end());
    EXPECT_EQ(fields, seats.fields());
    seats.unlock();
    seats.unlock();
    EXPECT_EQ(inspect(client, "flight").kind, LockState::Kind::free);
}

TEST_F(InspectGroup, ReadsARedissonPeersGroupAndStaysOffOtherHashes) {
    RedissonGroupLockPeer java(*raw, "flight", detail::value_fields({"12A"}));
    ASSERT_EQ(java.lock()->type, REDIS_REPLY_NIL);
    Client client(config());
    const LockState state = inspect(client, "flight");
    ASSERT_EQ(state.kind, LockState::Kind::multi_value_lock);
    ASSERT_EQ(state.values.size(), 1u);
    EXPECT_EQ(state.values[0].field, MultiValueLock::field_of("12A"));
    EXPECT_EQ(state.values[0].owner, java_owner);
    EXPECT_EQ(state.values[0].hold_count, 1);
    EXPECT_EQ(find_names(client), std::vector<std::string>{"flight"});
    // A side field whose count is no number, or a field of another shape: no group.
    raw->command({"HSET", "flight", MultiValueLock::field_of("12A") + ":" + java_owner + ":lock_count", "many"});
    EXPECT_EQ(inspect(client, "flight").kind, LockState::Kind::not_a_primitive);
    raw->command({"HSET", "other", "someone:1", "1", MultiValueLock::field_of("x") + ":a:lock_count", "1"});
    EXPECT_EQ(inspect(client, "other").kind, LockState::Kind::lock);
}

}  // namespace
}  // namespace holdfast::testing
