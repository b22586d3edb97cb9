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

TEST(ConfigFromUri, RejectsMalformed) {
    for (const char* uri : {"", "http://h:1", "redis://", "redis://h:notaport", "redis://h:70000", "redis://h:0",
                            "redis://h/x", "unix://relative.sock", "redis://[::1", "redis://a%zzb@h",
                            "unix:///s.sock?pass=x", "unix://:a@/s.sock?password=b", "unix://:pw@relative.sock"}) {
        EXPECT_THROW(Config::from_uri(uri), std::invalid_argument) << uri;
    }
}

}  // namespace
}  // namespace holdfast
