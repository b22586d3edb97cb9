// A multi-value lock's group on a Redis Cluster: one hash in the group's
// slot, its channel in that slot too (sharded pub/sub), so the set is taken
// and given back by one script and a waiter elsewhere is woken by the release.
#include <future>

#include "redis_cluster.hpp"
#include "redis_fixture.hpp"
#include "redisson_peer.hpp"
#include "transport/cluster_map.hpp"

namespace holdfast::testing {
namespace {

class GroupOnCluster : public ::testing::Test {
protected:
    void SetUp() override { cluster = std::make_unique<support::RedisCluster>(3); }
    Config config() const { return Config::from_uri(cluster->url()); }
    long long sharded_subscribers(const std::string& channel) const {
        long long total = 0;
        for (std::size_t i = 0; i < cluster->size(); ++i)
            total += support::SyncRedis(cluster->port(i)).command({"PUBSUB", "SHARDNUMSUB", channel})->element[1]->integer;
        return total;
    }
    std::unique_ptr<support::RedisCluster> cluster;
};

TEST_F(GroupOnCluster, TheGroupLivesInOneSlotAndItsReleaseWakesAWaiterOnAnotherClient) {
    for (const std::string group : {"flight:LH401", "{tenant-7}:seats"}) {
        Client holder(config()), waiter(config());
        MultiValueLock held(holder, group, {"12A", "12B", "12C"});
        held.lock(std::chrono::seconds(60));
        const std::size_t node = cluster->owner_of(detail::key_slot(group));
        EXPECT_EQ(support::SyncRedis(cluster->port(node)).integer({"HLEN", group}), 9) << group;
        MultiValueLock wanted(waiter, group, {"12C", "14F"});
        auto woken = take_and_give_back(wanted, std::chrono::seconds(30));
        const std::string channel = "redisson_lock__channel:" + (group.front() == '{' ? group : "{" + group + "}");
        ASSERT_TRUE(eventually([&] { return sharded_subscribers(channel) == 1; })) << group;
        held.unlock();
        ASSERT_EQ(woken.wait_for(std::chrono::seconds(10)), std::future_status::ready) << group;
        EXPECT_TRUE(woken.get());
        EXPECT_EQ(support::SyncRedis(cluster->port(node)).integer({"EXISTS", group}), 0);
    }
}

}  // namespace
}  // namespace holdfast::testing
