// A redis-server of the test's own with a replica of it (a real master and
// replica, in sync when the test starts): for replica sync's tests.
#pragma once

#include "redis_fixture.hpp"
#include "sentinel_group.hpp"

namespace holdfast::testing {

class ReplicatedTest : public RedisTest {
protected:
    std::vector<std::string> server_args() override { return {"--repl-diskless-sync-delay", "0"}; }
    void SetUp() override {
        RedisTest::SetUp();
        replica = std::make_unique<support::RedisServer>(
            std::vector<std::string>{"--replicaof", "127.0.0.1", std::to_string(server->port())});
        support::SentinelGroup::wait_for_replicas(server->port(), 1);
    }
    void TearDown() override { replica->resume(); }

    std::unique_ptr<support::RedisServer> replica;
};

}  // namespace holdfast::testing
