#include <gtest/gtest.h>

#include "holdfast/config.hpp"

namespace holdfast {
namespace {

TEST(ConfigFromUri, ReadsEveryPart) {
    auto c = Config::from_uri("redis://alice:p%40ss@db.example:6390/3");
    EXPECT_EQ(c.username, "alice");
    EXPECT_EQ(c.password, "p@ss");
    EXPECT_EQ(c.host, "db.example");
    EXPECT_EQ(c.port, 6390);
    EXPECT_EQ(c.database, 3);
    EXPECT_EQ(c.server_name(), "db.example:6390");
}

TEST(ConfigFromUri, DefaultsAndShortForms) {
    auto c = Config::from_uri("redis://127.0.0.1");
    EXPECT_EQ(c.port, 6379);
    EXPECT_EQ(c.database, 0);
    EXPECT_TRUE(c.password.empty());
    EXPECT_EQ(Config::from_uri("redis://secret@h:1").password, "secret");
    auto v6 = Config::from_uri("redis://[::1]:7000");
    EXPECT_EQ(v6.host, "::1");
    EXPECT_EQ(v6.port, 7000);
    EXPECT_EQ(v6.server_name(), "[::1]:7000");
}

TEST(ConfigFromUri, UnixSocket) {
    auto c = Config::from_uri("unix:///run/redis.sock?db=2");
    EXPECT_EQ(c.unix_socket, "/run/redis.sock");
    EXPECT_EQ(c.database, 2);
    EXPECT_EQ(c.server_name(), "/run/redis.sock");
}

TEST(ConfigFromUri, UnixSocketWithPassword) {
    auto c = Config::from_uri("unix://:p%40ss@/run/redis.sock");
    EXPECT_EQ(c.unix_socket, "/run/redis.sock");
    EXPECT_EQ(c.password, "p@ss");
    EXPECT_TRUE(c.username.empty());
    c = Config::from_uri("unix://alice:pw@/run/redis.sock?db=3");
    EXPECT_EQ(c.username, "alice");
    EXPECT_EQ(c.password, "pw");
    EXPECT_EQ(c.unix_socket, "/run/redis.sock");
    EXPECT_EQ(c.database, 3);
    c = Config::from_uri("unix:///run/redis.sock?password=a%26b&db=1&username=bob");
    EXPECT_EQ(c.unix_socket, "/run/redis.sock");
    EXPECT_EQ(c.password, "a&b");
    EXPECT_EQ(c.username, "bob");
    EXPECT_EQ(c.database, 1);
    // An '@' inside the path is part of it.
    EXPECT_EQ(Config::from_uri("unix:///run/user@1/redis.sock").unix_socket, "/run/user@1/redis.sock");
}

TEST(ConfigFromUri, ReadsTls) {
    auto c = Config::from_uri("rediss://u:pw@redis.example:6380/2");
    EXPECT_EQ(c.topology, Topology::single);
    EXPECT_TRUE(c.tls.enabled);
    EXPECT_TRUE(c.tls.verify);
    EXPECT_EQ(c.host, "redis.example");
    EXPECT_EQ(c.port, 6380);
    EXPECT_EQ(c.database, 2);
    EXPECT_FALSE(Config::from_uri("redis://h").tls.enabled);
}

TEST(ConfigFromUri, ReadsSentinels) {
    auto c = Config::from_uri("redis-sentinel://u:p%23w@s1:26380,s2,[::1]:26381/1#my%20master");
    EXPECT_EQ(c.topology, Topology::sentinel);
    EXPECT_FALSE(c.tls.enabled);
    EXPECT_EQ(c.servers, (std::vector<ServerAddress>{{"s1", 26380}, {"s2", 26379}, {"::1", 26381}}));
    EXPECT_EQ(c.sentinel_master, "my master");
    EXPECT_EQ(c.username, "u");
    EXPECT_EQ(c.password, "p#w");
    EXPECT_EQ(c.database, 1);
    EXPECT_EQ(c.server_name(), "master 'my master' (sentinels s1:26380,s2:26379,[::1]:26381)");
    EXPECT_TRUE(Config::from_uri("rediss-sentinel://s1#m").tls.enabled);
}

// The userinfo is the master's; the sentinels' own credentials (requirepass
// on the sentinels) go in the query, before the #master-name.
TEST(ConfigFromUri, ReadsTheSentinelsOwnCredentials) {
    auto c = Config::from_uri("redis-sentinel://:masterpw@s1,s2/2?sentinel_password=s%26p%23w&sentinel_username=watch#m");
    EXPECT_EQ(c.password, "masterpw");
    EXPECT_EQ(c.username, "");
    EXPECT_EQ(c.sentinel_password, "s&p#w");
    EXPECT_EQ(c.sentinel_username, "watch");
    EXPECT_EQ(c.database, 2);
    EXPECT_EQ(c.servers, (std::vector<ServerAddress>{{"s1", 26379}, {"s2", 26379}}));
    EXPECT_EQ(c.sentinel_master, "m");
    auto only_sentinels = Config::from_uri("rediss-sentinel://s1:26380?sentinel_password=x#m");
    EXPECT_EQ(only_sentinels.sentinel_password, "x");
    EXPECT_EQ(only_sentinels.password, "");
    EXPECT_EQ(only_sentinels.servers, (std::vector<ServerAddress>{{"s1", 26380}}));
}

TEST(ConfigFromUri, ReadsClusterSeeds) {
    auto c = Config::from_uri("redis-cluster://:pw@127.0.0.1:7000,127.0.0.1:7001");
    EXPECT_EQ(c.topology, Topology::cluster);
    EXPECT_EQ(c.servers, (std::vector<ServerAddress>{{"127.0.0.1", 7000}, {"127.0.0.1", 7001}}));
    EXPECT_EQ(c.password, "pw");
    EXPECT_EQ(c.server_name(), "cluster (seeds 127.0.0.1:7000,127.0.0.1:7001)");
    EXPECT_EQ(Config::from_uri("rediss-cluster://n1").servers, (std::vector<ServerAddress>{{"n1", 6379}}));
    EXPECT_TRUE(Config::from_uri("rediss-cluster://n1").tls.enabled);
}

// scan_interval is Redisson's scanInterval: the slot map's on a cluster, the
// sentinels' behind Sentinel, each with Redisson's default otherwise.
TEST(ConfigFromUri, ReadsTheScanIntervalOfItsDeployment) {
    auto s = Config::from_uri("redis-sentinel://s1,s2?scan_interval=250#m");
    EXPECT_EQ(s.sentinel_scan_interval, std::chrono::milliseconds(250));
    EXPECT_EQ(s.cluster_scan_interval, std::chrono::seconds(5));
    auto c = Config::from_uri("redis-cluster://a:7000?scan_interval=2000");
    EXPECT_EQ(c.cluster_scan_interval, std::chrono::milliseconds(2000));
    EXPECT_EQ(c.sentinel_scan_interval, std::chrono::seconds(1));
}

// A bad URI's error may be logged: it must not carry the password.
// Redisson's settings after '?' (docs/deployments.md, "Settings"), on every scheme.
TEST(ConfigFromUri, ReadsTheRedissonSettings) {
    auto c = Config::from_uri("redis://h:1/2?key_prefix=app1%3A&fair_lock_wait_timeout=60000");
    EXPECT_EQ(c.key_prefix, "app1:");
    EXPECT_EQ(c.fair_lock_wait_timeout, std::chrono::milliseconds(60000));
    EXPECT_EQ(c.database, 2);
    EXPECT_EQ(c.host, "h");
    auto s = Config::from_uri("redis-sentinel://:pw@s1,s2:26380/1?nat_map=10.0.0.5:6379=127.0.0.1:7000,redis-a=[::1]#mymaster");
    EXPECT_EQ(s.sentinel_master, "mymaster");
    EXPECT_EQ(s.password, "pw");
    EXPECT_EQ(s.database, 1);
    ASSERT_EQ(s.servers.size(), 2u);
    EXPECT_EQ(s.servers[1], (ServerAddress{"s2", 26380}));
    const std::vector<NatMapping> map{{{"10.0.0.5", 6379}, {"127.0.0.1", 7000}}, {{"redis-a", 0}, {"::1", 0}}};
    EXPECT_EQ(s.nat_map, map);
    auto u = Config::from_uri("unix:///run/r.sock?db=3&key_prefix=x");
    EXPECT_EQ(u.database, 3);
    EXPECT_EQ(u.key_prefix, "x");
    auto defaults = Config::from_uri("redis-cluster://a:7000");
    EXPECT_EQ(defaults.fair_lock_wait_timeout, std::chrono::minutes(5));  // Redisson's default
    EXPECT_TRUE(defaults.key_prefix.empty());
    EXPECT_TRUE(defaults.nat_map.empty());
}

TEST(ConfigFromUri, ErrorsHideThePassword) {
    for (const char* uri : {"redis://alice:s3cret@h:notaport", "redis://s3cret@h:0", "unix:///s.sock?password=s3cret&x=1",
                            "redis-sentinel://:s3cret@s1", "redis-sentinel://s1:x?sentinel_password=s3cret#m",
                            "redis-sentinel://:s3cret@s1?sentinel_password=s3cret&x=1#m"}) {
        try {
            Config::from_uri(uri);
            ADD_FAILURE() << uri << " was accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()).find("s3cret"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("***"), std::string::npos) << e.what();
        }
    }
}

TEST(ConfigFromUri, RejectsMalformed) {
    for (const char* uri : {"", "http://h:1", "redis://", "redis://h:notaport", "redis://h:70000", "redis://h:0",
                            "redis://h/x", "unix://relative.sock", "redis://[::1", "redis://a%zzb@h",
                            "unix:///s.sock?pass=x", "unix://:a@/s.sock?password=b", "unix://:pw@relative.sock", "redis://a,b",
                            "redis-sentinel://s1", "redis-sentinel://s1#", "redis://h#m", "redis-cluster://a/1",
                            "redis-cluster://a,,b", "rediss://", "redis-cluster://a:0", "redis://h?sentinel_password=x",
                            "redis-cluster://a?sentinel_password=x", "redis-sentinel://s1?password=x#m"}) {
        EXPECT_THROW(Config::from_uri(uri), std::invalid_argument) << uri;
    }
}

}  // namespace
}  // namespace holdfast
