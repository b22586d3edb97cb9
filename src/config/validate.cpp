#include "config/validate.hpp"

#include <stdexcept>
#include <string>

#include "common/quoted.hpp"

namespace holdfast::detail {

void validate(const Config& config) {
    // Longer ones overflow steady_clock deadlines, or Redis expiry times.
    auto positive = [](std::chrono::milliseconds d, const char* name) {
        if (d <= std::chrono::milliseconds::zero())
            throw std::invalid_argument(std::string("holdfast: Config::") + name + " must be > 0");
        if (d > max_duration)
            throw std::invalid_argument(std::string("holdfast: Config::") + name + " must be at most " +
                                        std::to_string(max_duration.count()) + " ms (100 years), got " +
                                        std::to_string(d.count()) + " ms");
    };
    positive(config.connect_timeout, "connect_timeout");
    positive(config.timeout, "timeout");
    positive(config.retry_interval, "retry_interval");
    positive(config.retry_interval_max, "retry_interval_max");
    positive(config.lock_watchdog_timeout, "lock_watchdog_timeout");
    if (config.lock_watchdog_timeout < std::chrono::milliseconds(3))
        throw std::invalid_argument("holdfast: Config::lock_watchdog_timeout must be at least 3 ms");
    if (config.connection_pool_size == std::size_t{0})
        throw std::invalid_argument("holdfast: Config::connection_pool_size must be at least 1");
    if (config.lock_watchdog_batch_size == 0)
        throw std::invalid_argument("holdfast: Config::lock_watchdog_batch_size must be at least 1");
    positive(config.lock_handoff_check, "lock_handoff_check");
    positive(config.replica_sync_timeout, "replica_sync_timeout");
    positive(config.fair_lock_wait_timeout, "fair_lock_wait_timeout");
    positive(config.cluster_scan_interval, "cluster_scan_interval");
    positive(config.sentinel_scan_interval, "sentinel_scan_interval");
    if (config.database < 0) throw std::invalid_argument("holdfast: Config::database must be >= 0");
    auto fail = [](const std::string& why) { throw std::invalid_argument("holdfast: Config::" + why); };
    switch (config.topology) {
        case Topology::single:
            if (config.unix_socket.empty() && config.host.empty()) fail("host is empty");
            if (config.unix_socket.empty() && config.port == 0) fail("port must not be 0");
            if (!config.unix_socket.empty() && config.tls.enabled) fail("tls: TLS over a Unix socket (unix_socket) is not supported");
            break;
        case Topology::sentinel:
            if (config.servers.empty()) fail("servers: Topology::sentinel needs the sentinels' addresses");
            if (config.sentinel_master.empty()) fail("sentinel_master: Topology::sentinel needs the master's name");
            break;
        case Topology::cluster:
            if (config.servers.empty()) fail("servers: Topology::cluster needs at least one seed node");
            if (config.database != 0) fail("database: a cluster has only database 0");
            break;
    }
    for (const ServerAddress& s : config.servers)
        if (s.host.empty() || s.port == 0) fail("servers: a server has no host, or port 0");
    for (const NatMapping& m : config.nat_map)
        if (m.announced.host.empty() || m.reachable.host.empty())
            fail("nat_map: a mapping has no host (announced " + quoted(m.announced.host) + ", reachable " +
                 quoted(m.reachable.host) + ")");
    if (config.slow_acquire_threshold < std::chrono::milliseconds::zero()) fail("slow_acquire_threshold must be >= 0");
    if (config.client_name)
        for (char c : *config.client_name)
            if (c <= ' ' || c > '~')
                fail("client_name: CLIENT SETNAME takes printable ASCII without spaces; got " +
                     quoted(*config.client_name));
    if (config.tls.cert_file.empty() != config.tls.key_file.empty())
        fail("tls: give both cert_file and key_file (a client certificate and its key), or neither");
}

}  // namespace holdfast::detail
