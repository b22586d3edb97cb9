// Client configuration: a plain aggregate, names after Redisson's where one exists.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "holdfast/events.hpp"
#include "holdfast/export.hpp"

namespace holdfast {

/// The longest lease, timeout or watchdog timeout holdfast accepts (100 years).
/// Longer ones would overflow steady_clock deadlines (nanoseconds: about 292
/// years) and Redis's expiry times. A longer *wait* simply means no deadline.
inline constexpr std::chrono::milliseconds max_duration = std::chrono::years(100);

namespace detail {

/// Rounded up to whole milliseconds; a duration beyond what milliseconds can
/// hold (hours::max(), say) saturates instead of overflowing.
template <class Rep, class Period>
std::chrono::milliseconds to_ms(const std::chrono::duration<Rep, Period>& d) {
    using Wide = std::chrono::duration<long double, std::milli>;
    const Wide wide = d;
    if (wide >= Wide(std::chrono::milliseconds::max())) return std::chrono::milliseconds::max();
    if (wide <= Wide(std::chrono::milliseconds::min())) return std::chrono::milliseconds::min();
    return std::chrono::ceil<std::chrono::milliseconds>(d);
}

/// Whole milliseconds left until `deadline` on any clock, 0 if it has passed
/// (checked first: deadline - now overflows for time_point::min()).
template <class Clock, class ClockDuration>
std::chrono::milliseconds ms_until(const std::chrono::time_point<Clock, ClockDuration>& deadline) {
    const auto now = Clock::now();
    if (deadline <= now) return std::chrono::milliseconds::zero();
    return to_ms(deadline - now);
}

}  // namespace detail

/// A server by TCP address: a sentinel, a cluster seed or node.
struct HOLDFAST_EXPORT ServerAddress {
    std::string host;
    /// 0 only in a NatMapping (see there); a server of Config::servers needs one.
    std::uint16_t port = 0;
    /// "host:port", or "[::1]:port" for an IPv6 host: how errors name it.
    std::string name() const;
    friend bool operator==(const ServerAddress&, const ServerAddress&) = default;
};

/// An address a server announces, and where to connect for it instead
/// (Config::nat_map).
struct NatMapping {
    /// As announced (a cluster node in CLUSTER SLOTS or a redirect, a master
    /// as the sentinels name it) or as given in Config. Port 0: any port of
    /// that host, as Redisson's HostNatMapper maps hosts.
    ServerAddress announced;
    /// Where to connect for it. Port 0: the announced port.
    ServerAddress reachable;
    friend bool operator==(const NatMapping&, const NatMapping&) = default;
};

/// Where the lock servers are (docs/deployments.md).
enum class Topology {
    single,    ///< one server: host and port, or unix_socket
    sentinel,  ///< the master named sentinel_master, asked of the sentinels in `servers`, followed on failover
    cluster,   ///< a Redis Cluster, its slot map read from the seed nodes in `servers`
};

/// TLS for every connection (rediss://...), through Asio over OpenSSL.
struct TlsConfig {
    /// false: plain TCP, and every other field here is ignored. TLS over
    /// unix_socket is refused.
    bool enabled = false;
    /// Trusted CAs: a PEM file and/or a hashed certificate directory; both
    /// empty: the system's default store.
    std::string ca_file;
    std::string ca_directory;
    /// Client certificate and its private key (PEM), for servers that ask for
    /// one (tls-auth-clients). Both or neither (one alone is refused); both
    /// empty: no client certificate.
    std::string cert_file;
    std::string key_file;
    /// The name the server certificate must carry, also sent as SNI; empty:
    /// the host connected to.
    std::string server_name;
    /// false accepts any certificate, which defeats TLS: for tests only.
    bool verify = true;
};

/// Which pub/sub a cluster client uses (Redisson's shardedSubscriptionMode):
/// automatic picks sharded (SSUBSCRIBE/SPUBLISH) where the cluster supports
/// it (Redis 7+), as Redisson does, so both wake each other's waiters.
enum class ShardedSubscription { automatic, on, off };

/// Waiting for replicas after a lock's write (Redisson's synced writes):
/// `WAIT <connected replicas> <replica_sync_timeout>` after each acquire,
/// release and watchdog renewal, where the master has replicas.
enum class ReplicaSync {
    off,       ///< no WAIT
    wait,      ///< WAIT, then go on however many replicas acknowledged
    required,  ///< WAIT; an acquire no replica acknowledged is given back and fails (ReplicaSyncError),
               ///< a renewal none acknowledged counts as failed (renewal_failed event). Once a replica
               ///< was seen, at least one is waited for, also on a master that lost its replicas
               ///< (docs/deployments.md, "Replica sync")
};

/// Every duration is in milliseconds. Client's constructor refuses a Config
/// that breaks a rule stated here ("must be ...", "refused") with
/// std::invalid_argument; a duration that must be > 0 must also be at most
/// max_duration.
struct HOLDFAST_EXPORT Config {
    Topology topology = Topology::single;
    /// TCP server (Topology::single). Ignored when unix_socket is set, and
    /// under the other topologies. Empty host and port 0 are refused.
    std::string host = "127.0.0.1";
    std::uint16_t port = 6379;
    /// Path of a Unix domain socket; empty for TCP.
    std::string unix_socket;
    /// The sentinels (Topology::sentinel) or cluster seed nodes (Topology::cluster),
    /// each with a host and a port other than 0; empty is refused under those
    /// topologies. Ignored by Topology::single.
    std::vector<ServerAddress> servers;
    /// The master's name as the sentinels know it (Topology::sentinel, which
    /// refuses it empty).
    std::string sentinel_master;
    /// AUTH credentials for the sentinels themselves; empty password: no AUTH.
    /// Empty username: AUTH with the password alone (the "default" user).
    std::string sentinel_username;
    std::string sentinel_password;
    /// AUTH credentials; empty password means no AUTH. Empty username means "default".
    std::string username;
    std::string password;
    /// SELECT'ed database number; 0 sends no SELECT. Must be >= 0, and 0 in a
    /// cluster.
    int database = 0;
    /// TLS for every connection, sentinels included; off by default.
    TlsConfig tls;
    /// Topology::cluster only: SSUBSCRIBE/SPUBLISH or SUBSCRIBE/PUBLISH.
    ShardedSubscription sharded_subscription = ShardedSubscription::automatic;
    /// Topology::cluster: how often the slot map is read again with nothing
    /// else prompting it (Redisson's scanInterval, the same default), so a
    /// client with no command in flight still follows the cluster. While a
    /// master's connection is down, the map is read every
    /// cluster_scan_interval / 20 (at least 100 ms) until its slots have a new
    /// owner or it is back. Must be > 0.
    std::chrono::milliseconds cluster_scan_interval{5000};
    /// Topology::sentinel: how often every sentinel is asked again where the
    /// master is (Redisson's scanInterval for sentinels, the same default), on
    /// the connection the client keeps to each, which also hears
    /// +switch-master at once. A client leaves a deposed master within this
    /// interval of the first sentinel it reaches naming the new one
    /// (docs/deployments.md, "Following a failover"). Must be > 0.
    std::chrono::milliseconds sentinel_scan_interval{1000};
    /// Whether a lock's writes wait for replicas (ReplicaSync). Anything but
    /// `off` also sends ROLE on each connection to learn the replica count; no
    /// WAIT is sent where the master reports no replica (or ROLE is refused),
    /// except under `required` once a replica was seen.
    ReplicaSync replica_sync = ReplicaSync::required;
    /// The WAIT's timeout: how long one acquire, release or renewal waits for
    /// its replicas' acknowledgements (not counted against `timeout`). Also,
    /// under every ReplicaSync, the pause between re-sends of a release that
    /// got no reply or no replica's confirmation. Must be > 0 (WAIT's 0 would
    /// block for ever).
    std::chrono::milliseconds replica_sync_timeout{1000};

    /// How long one connection attempt may take. Must be > 0.
    std::chrono::milliseconds connect_timeout{3000};
    /// How long a command may wait for its reply, and how long a command issued
    /// while disconnected waits for the connection to come back, before it
    /// fails; a server silent this long is taken as stalled. Must be > 0.
    std::chrono::milliseconds timeout{3000};
    /// First reconnect delay after a connection drops; doubles per failed
    /// attempt up to retry_interval_max. Both must be > 0.
    std::chrono::milliseconds retry_interval{50};
    std::chrono::milliseconds retry_interval_max{2000};
    /// Command connections per server; commands for one key always use the same
    /// one. Unset: 2 on one server (the server runs one connection's batch
    /// while the client reads the other's replies), 1 per master in a cluster
    /// (the masters already overlap; more connections only split the batches).
    /// 0 is refused.
    std::optional<std::size_t> connection_pool_size;
    /// connection_pool_size, or its default for this topology.
    std::size_t pool_size() const;

    /// Lease of a lock taken without an explicit lease; the watchdog renews it
    /// every third of this while held (Redisson's lockWatchdogTimeout). Must be
    /// at least 3 ms.
    std::chrono::milliseconds lock_watchdog_timeout{30000};
    /// The most held locks (keys) the watchdog renews in one script call
    /// (Redisson's lockWatchdogBatchSize); more are split over several calls,
    /// one batch per renew script and cluster shard. 0 is refused (at least 1).
    std::size_t lock_watchdog_batch_size = 100;
    /// A Lock waiter listed for targeted wake-ups (docs/design.md) that hears
    /// a release name another waiter tries once this long after, unless a
    /// release wakes it first: the longest a named waiter that died with its
    /// promise keeps the free lock from the others, and how often each
    /// waiting process tries while others take turns. Must be > 0.
    std::chrono::milliseconds lock_handoff_check{1000};
    /// Each fair-lock waiter's budget in the queue's deadline arithmetic
    /// (Redisson's fairLockWaitTimeout, the same default): every client of a
    /// queue, Java or C++, must use the same one (docs/fair_lock.md). Must be > 0.
    std::chrono::milliseconds fair_lock_wait_timeout{300000};

    /// Put before the name of every lock, semaphore and latch this client
    /// makes or inspects, before any key or channel is derived from it, as a
    /// Redisson NameMapper whose map(name) is prefix + name: under "app1:",
    /// Lock(client, "orders") is the key `app1:orders` with the channel
    /// `redisson_lock__channel:{app1:orders}`. A primitive's name(), and the
    /// names in errors and events, are the keys, prefix included;
    /// find_names() gives names without it. Empty: none.
    std::string key_prefix;
    /// Where to connect instead of the addresses the servers announce or
    /// were given as (Redisson's natMapper): for a cluster or sentinels behind
    /// NAT or in containers. The first mapping that matches an address wins;
    /// every TCP connection is mapped (seeds, cluster nodes, redirects,
    /// sentinels, the masters they name). Errors name the announced address.
    /// Empty: every address is used as announced. A mapping without a host is
    /// refused.
    std::vector<NatMapping> nat_map;

    /// Operations (docs/operations.md). Told of connections lost and
    /// restored, failed renewals, lost leases, slow acquires and reloaded
    /// scripts; empty: nothing is told. Runs on the client's loop thread.
    EventHandler on_event;
    /// An acquire that waited longer than this is told as Event::slow_acquire
    /// (to on_event); 0: every acquire is told. Must be >= 0.
    std::chrono::milliseconds slow_acquire_threshold{1000};
    /// Sent by CLIENT SETNAME on every connection, so CLIENT LIST shows whose
    /// connections they are. nullopt: "<program>-<client id>"; empty: none.
    /// Printable ASCII without spaces, else refused.
    std::optional<std::string> client_name;
    /// Counts Client::metrics(); false saves a few atomic adds per call.
    bool metrics = true;

    /// Fills a Config from a URI (docs/deployments.md):
    ///   redis://[user:password@]host[:port][/db]            (rediss:// for TLS)
    ///   unix://[[user]:password@]/path.sock[?db=N&password=...&username=...]
    ///   redis-sentinel://[user:password@]host[:port][,host[:port]...][/db][?sentinel_password=...]#master
    ///   redis-cluster://[user:password@]host[:port][,host[:port]...]
    /// (rediss-sentinel://, rediss-cluster:// for TLS), each with optional
    /// settings after a `?` (before a #master), &-separated:
    ///   key_prefix=P, fair_lock_wait_timeout=MS, scan_interval=MS (a cluster's
    ///   cluster_scan_interval, a sentinel URI's sentinel_scan_interval),
    ///   nat_map=ANNOUNCED=REACHABLE[,ANNOUNCED=REACHABLE...] (host[:port] each),
    ///   and for a sentinel URI sentinel_password=P, sentinel_username=U: the
    ///   sentinels' own credentials (its user:password is the master's).
    /// Sentinels default to port 26379, servers to 6379. %-escapes work in the
    /// user, the password and the settings' values.
    /// Throws std::invalid_argument on a malformed URI.
    static Config from_uri(std::string_view uri);

    /// "host:port", the socket path, "master 'm' (sentinels a:1,b:2)" or
    /// "cluster (seeds a:1,b:2)": how errors name the servers.
    std::string server_name() const;
};

}  // namespace holdfast
