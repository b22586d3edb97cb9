// The lock server of one run, in whichever topology its scenario runs on
// (check.hpp, Topology): one redis-server, one with a replica, a Sentinel
// deployment or a Redis Cluster. The one place that knows them apart: the
// run, the nemeses, the witness and the sweep ask it for nodes and ports.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "check.hpp"
#include "redis_cluster.hpp"
#include "redis_server.hpp"
#include "sentinel_group.hpp"

namespace holdfast::check {

/// cluster-node-timeout of the cluster the cluster-failover and
/// cluster-kill-primary nemeses act on: a killed primary is replaced within seconds.
inline constexpr int failover_node_timeout_ms = 1500;

class Deployment {
public:
    /// Starts the servers; `users`: ACL users (acl_user_of(0..users-1), allowed
    /// everything) on every data node, from its command line, so that a
    /// restarted node has them too.
    Deployment(Topology topology, const Scenario& scenario, int users);
    ~Deployment();
    Deployment(const Deployment&) = delete;
    Deployment& operator=(const Deployment&) = delete;

    Topology topology() const { return topology_; }
    /// The data node the run started with as master: the single-server
    /// nemeses' target, and how a worker reaches a server or a replicated one.
    support::RedisServer& first_master() { return *first_master_; }
    /// The workers' URI where they find the master through others (Sentinel,
    /// Cluster); empty where they connect to first_master() by port.
    std::string url() const;
    /// Every data node's port: masters and replicas (the witness reads those that say master).
    std::vector<std::uint16_t> data_ports() const;
    /// Every data node, to apply an ACL change to each (ACLs are per node).
    std::vector<support::RedisServer*> data_nodes();
    /// The data node that replicates the master now (replicated, sentinel); null elsewhere.
    support::RedisServer* replica();
    /// The master now (the sentinels' choice under Sentinel); null on a cluster.
    support::RedisServer* master();
    support::SentinelGroup* sentinels() { return sentinels_.get(); }
    support::RedisCluster* cluster() { return cluster_.get(); }

private:
    Topology topology_;
    std::unique_ptr<support::SentinelGroup> sentinels_;
    std::unique_ptr<support::RedisCluster> cluster_;
    std::vector<std::unique_ptr<support::RedisServer>> servers_;  // server, replicated: master, then replica
    support::RedisServer* first_master_ = nullptr;
};

/// The lock server's command line for `scenario`: DEBUG allowed, persistence
/// under restart-persistent, and `users` ACL users allowed everything.
std::vector<std::string> lock_server_args(const Scenario& scenario, int users);

}  // namespace holdfast::check
