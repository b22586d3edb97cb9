// A Sentinel deployment for tests and the checker: one master, one replica
// and three redis-sentinel processes, each a RedisServer (a free loopback
// port, a temp dir, stopped on destruction). Never port 6379.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "redis_server.hpp"

namespace holdfast::support {

class SentinelGroup {
public:
    /// Starts the master, its replica (waits until it is in sync), then the
    /// sentinels, monitoring it as `master_name` with quorum 2, down after
    /// 1 s (the third sentinel: 3 s, so it only votes), failover timeout 3 s,
    /// hellos every 250 ms and INFO every 500 ms (SENTINEL DEBUG): a killed
    /// master is replaced in about 2 s, and back as a replica about 2 s after
    /// its restart. `server_extra` goes to both data nodes.
    /// With `tls`, every process also listens for TLS with its certificate,
    /// and replication, sentinel-to-server and sentinel-to-sentinel traffic
    /// go over TLS (tls-replication): the sentinels name TLS ports. The plain
    /// ports stay, for the test's own inspection.
    explicit SentinelGroup(std::string master_name = "holdfast-master", std::vector<std::string> server_extra = {},
                           std::optional<TlsServer> tls = std::nullopt);

    const std::string& master_name() const { return name_; }
    /// redis-sentinel://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3#name (with TLS:
    /// rediss-sentinel:// and the sentinels' TLS ports).
    std::string url() const;

    /// The data node the sentinels name master now, and the other one.
    RedisServer& master();
    RedisServer& replica();
    /// Both data nodes, in start order (the first started as master).
    std::vector<std::unique_ptr<RedisServer>> nodes;
    std::vector<std::unique_ptr<RedisServer>> sentinels;

    /// The master's (plain) port, as the first reachable sentinel names it
    /// (paused ones are skipped: RedisServer::answers()).
    /// Every port the group's functions take and return is the plain one.
    std::uint16_t master_port() const;

    /// SENTINEL FAILOVER on sentinels[through], then waits (up to `within`)
    /// until every sentinel that answers() names the other node and that node
    /// says ROLE master. Returns its port.
    std::uint16_t failover(std::chrono::seconds within = std::chrono::seconds(30), std::size_t through = 0);

    /// The hello period of sentinels[from] and after: Sentinel's default (2 s)
    /// if `production`, else the group's own (250 ms). At the default pace a
    /// deposed or returning master is turned into a replica only after 8 s
    /// (four hello periods), as in production.
    void production_pace(bool production, std::size_t from = 0);

    /// Waits until every sentinel knows the other two and the replica (needed
    /// before a failover that takes a vote, such as after kill -9 of the
    /// master). The constructor ends with it.
    void wait_until_sentinels_agree(std::chrono::seconds within = std::chrono::seconds(30));

    /// Waits until the master (by port) reports `count` replicas online that
    /// acknowledge its writes (WAIT).
    static void wait_for_replicas(std::uint16_t master_port, int count,
                                  std::chrono::seconds within = std::chrono::seconds(20));

    /// Waits until every sentinel that answers() names a master other than `old_port`; returns it.
    std::uint16_t wait_for_new_master(std::uint16_t old_port, std::chrono::seconds within = std::chrono::seconds(30));

    /// Copies every process's log (redis.log in its temp dir, gone with the
    /// group) into directory `to`, as node-PORT.log and sentinel-PORT.log:
    /// what the sentinels saw and decided, to explain a slow failover later.
    void keep_logs(const std::string& to) const;

private:
    /// The plain port of the node a sentinel names by `named` (its TLS port, with TLS).
    std::uint16_t plain_port(std::uint16_t named) const;
    std::uint16_t named_port_of(std::uint16_t sentinel) const;

    std::string name_;
    bool tls_ = false;
};

}  // namespace holdfast::support
