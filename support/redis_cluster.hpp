// A throwaway Redis Cluster for tests, the checker and the benchmark: three
// (or more) masters on free loopback ports below 55536 (each node's bus port
// is port + 10000), slots split evenly, stopped on destruction. Never port 6379.
// Optionally with replicas, for failover: nodes 0..masters-1 start as the
// masters, then each master's replicas in turn; failovers change the roles.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "redis_server.hpp"

namespace holdfast::support {

struct ClusterOptions {
    std::size_t masters = 3;
    std::size_t replicas = 0;  // per master
    /// cluster-node-timeout: how long before a silent primary is failed over.
    int node_timeout_ms = 5000;
    std::vector<std::string> extra;  // appended to every node's command line
};

class RedisCluster {
public:
    /// Starts `masters` nodes and joins them (CLUSTER ADDSLOTSRANGE, MEET);
    /// returns once every node reports cluster_state:ok. Throws std::runtime_error.
    explicit RedisCluster(std::size_t masters = 3, std::vector<std::string> extra = {});
    /// As above, with options.replicas replicas per master (CLUSTER REPLICATE),
    /// returning once every replica's link to its master is up.
    explicit RedisCluster(const ClusterOptions& options);
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
    /// The node (index) serving `slot`, as the first running node sees it.
    std::size_t owner_of(std::size_t slot) const;
    /// A running replica (index) of node `primary`, as ROLE says; throws if none.
    std::size_t replica_of(std::size_t primary) const;
    /// Whether node i runs (not killed; paused counts as running).
    bool running(std::size_t i) const { return nodes_.at(i)->pid() > 0; }
    /// CLUSTER FAILOVER on `replica` (again if it timed out unpromoted);
    /// returns once every running node says it serves its master's slots.
    /// Throws after 30 s.
    void failover(std::size_t replica);
    /// Waits until every running node says node `now` serves `slot`. Throws after `within`.
    void wait_for_owner(std::size_t slot, std::size_t now, std::chrono::milliseconds within) const;
    /// Waits until every master has its replicas (ROLE) and each replica's
    /// link is up. Throws after `within`.
    void wait_for_replicas(std::chrono::milliseconds within) const;
    /// Moves `slot` and its keys to node `to` (SETSLOT IMPORTING/MIGRATING,
    /// MIGRATE, SETSLOT NODE on every node), as redis-cli --cluster reshard does.
    void move_slot(std::size_t slot, std::size_t to);
    /// The first half of a move: `slot` stays at its owner, migrating to `to`
    /// (a key missing at the owner answers -ASK). finish_move() ends it.
    void start_move(std::size_t slot, std::size_t to);
    /// `between_keys` > 0: the keys move one at a time with that pause after
    /// each, so that commands meet the slot with its keys split.
    void finish_move(std::size_t slot, std::size_t to,
                     std::chrono::milliseconds between_keys = std::chrono::milliseconds(0));

private:
    void wait_until_ok();
    /// The ROLE reply's first two fields of node i: "master"/"slave" and, for a replica, its master's port.
    std::pair<std::string, long long> role(std::size_t i) const;
    std::size_t any_running() const;

    std::size_t masters_ = 0, replicas_ = 0;
    std::vector<std::unique_ptr<RedisServer>> nodes_;
    std::vector<std::string> ids_;
};

}  // namespace holdfast::support
