// A throwaway Redis Cluster for tests, the checker and the benchmark: three
// (or more) masters on free loopback ports below 55536 (each node's bus port
// is port + 10000), slots split evenly, stopped on destruction. Never port 6379.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "redis_server.hpp"

namespace holdfast::support {

class RedisCluster {
public:
    /// Starts `masters` nodes and joins them (CLUSTER ADDSLOTSRANGE, MEET);
    /// returns once every node reports cluster_state:ok. Throws std::runtime_error.
    explicit RedisCluster(std::size_t masters = 3, std::vector<std::string> extra = {});
    ~RedisCluster();
    RedisCluster(const RedisCluster&) = delete;
    RedisCluster& operator=(const RedisCluster&) = delete;

    std::size_t size() const { return nodes_.size(); }
    RedisServer& node(std::size_t i) { return *nodes_.at(i); }
    std::uint16_t port(std::size_t i) const { return nodes_.at(i)->port(); }
    /// redis-cluster://127.0.0.1:p1,127.0.0.1:p2,... (every node a seed).
    std::string url() const;
    std::string node_id(std::size_t i) const;

    /// The slot of `key`, as the cluster computes it (CLUSTER KEYSLOT).
    std::size_t slot_of(const std::string& key) const;
    /// The node (index) serving `slot`, as node 0 sees it.
    std::size_t owner_of(std::size_t slot) const;
    /// Moves `slot` and its keys to node `to` (SETSLOT IMPORTING/MIGRATING,
    /// MIGRATE, SETSLOT NODE on every node), as redis-cli --cluster reshard does.
    void move_slot(std::size_t slot, std::size_t to);
    /// The first half of a move: `slot` stays at its owner, migrating to `to`
    /// (a key missing at the owner answers -ASK). finish_move() ends it.
    void start_move(std::size_t slot, std::size_t to);
    void finish_move(std::size_t slot, std::size_t to);

private:
    void wait_until_ok();

    std::vector<std::unique_ptr<RedisServer>> nodes_;
    std::vector<std::string> ids_;
};

}  // namespace holdfast::support
