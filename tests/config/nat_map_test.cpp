// Config::nat_map (Redisson's natMapper): which mapping applies to an
// address, and, on a real cluster and a real Sentinel deployment, that every
// connection goes where the map says. Each mapped address is reached through
// a TcpProxy of the test's own: freezing the proxy stops exactly the traffic
// the map sent through it, which a client connecting to the announced
// addresses would not notice.
#include <memory>
#include <vector>

#include "config/nat_map.hpp"
#include "redis_cluster.hpp"
#include "redis_fixture.hpp"
#include "sentinel_group.hpp"
#include "tcp_proxy.hpp"

namespace holdfast::testing {
namespace {

TEST(NatMap, TheFirstMatchingMappingWinsAndPortZeroMeansAnyOrTheSame) {
    const std::vector<NatMapping> map{{{"10.0.0.5", 6379}, {"127.0.0.1", 7000}},
                                      {{"10.0.0.5", 0}, {"gateway", 0}},
                                      {{"redis-a", 0}, {"127.0.0.1", 7100}}};
    EXPECT_EQ(detail::nat_mapped(map, {"10.0.0.5", 6379}), (ServerAddress{"127.0.0.1", 7000}));
    EXPECT_EQ(detail::nat_mapped(map, {"10.0.0.5", 6380}), (ServerAddress{"gateway", 6380}));
    EXPECT_EQ(detail::nat_mapped(map, {"redis-a", 1}), (ServerAddress{"127.0.0.1", 7100}));
    EXPECT_EQ(detail::nat_mapped(map, {"10.0.0.6", 6379}), (ServerAddress{"10.0.0.6", 6379}));
    EXPECT_EQ(detail::nat_mapped({}, {"h", 1}), (ServerAddress{"h", 1}));
}

// Every node (seeds and the nodes CLUSTER SLOTS names) behind a proxy of its
// own, mapped in Config: locks work on every master, and freezing one
// master's proxy cuts that master off, and only it.
TEST(NatMapCluster, EveryNodeIsReachedWhereTheMapSays) {
    support::RedisCluster cluster(3);
    std::vector<std::unique_ptr<support::TcpProxy>> proxies;
    Config c = Config::from_uri(cluster.url());
    c.timeout = std::chrono::seconds(1);
    for (std::size_t i = 0; i < cluster.size(); ++i) {
        proxies.push_back(std::make_unique<support::TcpProxy>(cluster.port(i)));
        c.nat_map.push_back({{"127.0.0.1", cluster.port(i)}, {"127.0.0.1", proxies.back()->port()}});
    }
    auto name_on = [&](std::size_t node) {
        for (int i = 0;; ++i)
            if (const std::string name = "nat-" + std::to_string(i); cluster.owner_of(cluster.slot_of(name)) == node)
                return name;
    };
    Client client(c);
    for (std::size_t node = 0; node < cluster.size(); ++node) {
        Lock lock(client, name_on(node));
        ASSERT_TRUE(lock.try_lock()) << lock.name();
        EXPECT_EQ(support::SyncRedis(cluster.port(node)).integer({"EXISTS", lock.name()}), 1);
        lock.unlock();
    }
    proxies[0]->freeze();
    Lock cut_off(client, name_on(0)), still_there(client, name_on(1));
    EXPECT_THROW(cut_off.try_lock(), ConnectionError);
    ASSERT_TRUE(still_there.try_lock());
    still_there.unlock();
    proxies[0]->heal();
}

// The sentinels and the master they name, each behind a proxy: the client
// asks the sentinels and locks on the master through them; with the master's
// proxy frozen its commands time out, and with the sentinels' proxies frozen
// no client can start.
TEST(NatMapSentinel, TheSentinelsAndTheMasterTheyNameAreReachedWhereTheMapSays) {
    support::SentinelGroup group;
    const std::uint16_t master = group.master_port();
    support::TcpProxy master_proxy(master);
    std::vector<std::unique_ptr<support::TcpProxy>> sentinel_proxies;
    Config c = Config::from_uri(group.url());
    c.timeout = std::chrono::seconds(1);
    c.connect_timeout = std::chrono::seconds(1);
    c.nat_map.push_back({{"127.0.0.1", master}, {"127.0.0.1", master_proxy.port()}});
    for (const auto& sentinel : group.sentinels) {
        sentinel_proxies.push_back(std::make_unique<support::TcpProxy>(sentinel->port()));
        c.nat_map.push_back({{"127.0.0.1", sentinel->port()}, {"127.0.0.1", sentinel_proxies.back()->port()}});
    }
    {
        Client client(c);
        Lock lock(client, "orders");
        ASSERT_TRUE(lock.try_lock());
        EXPECT_EQ(support::SyncRedis(master).string({"HGET", "orders", client.current_owner()}), "1");
        lock.unlock();
        master_proxy.freeze();
        Lock other(client, "other");
        EXPECT_THROW(other.try_lock(), ConnectionError);
        master_proxy.heal();
    }
    for (auto& proxy : sentinel_proxies) proxy->freeze();
    EXPECT_THROW(Client{c}, ConnectionError);
    for (auto& proxy : sentinel_proxies) proxy->heal();
}

}  // namespace
}  // namespace holdfast::testing
