// Redis Cluster routing: one connection pool per master, MOVED and ASK followed, the map read
// again. It routes bytes "for key K" to the master serving K's slot; it knows nothing of locks.
// What the map says and how replies change it is ClusterMap's (cluster_map.hpp).
#pragma once

#include <asio.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "holdfast/config.hpp"
#include "transport/cluster_map.hpp"
#include "transport/connection.hpp"

namespace holdfast::detail {

/// Thread safety: send() and owner() from any thread; refresh(), stop_now()
/// and the callbacks on the event loop thread; discover() on any other thread.
class Cluster {
public:
    Cluster(asio::io_context& io, const Config& config);

    /// Reads the slot map from the first seed that answers, and whether the
    /// cluster has sharded pub/sub; a seed that cannot be connected to costs
    /// one connect attempt (refused: none; no answer: Config::connect_timeout),
    /// then the next is asked. Blocks; the loop must be running. Throws
    /// ConnectionError (no seed answered) or ServerError (not a cluster).
    void discover();
    /// Whether the cluster answered PUBSUB SHARDNUMSUB (Redis 7+).
    bool supports_sharded_pubsub() const { return sharded_pubsub_; }

    /// Sends RESP bytes to the master of `key`'s slot (`key` empty: any
    /// master), following MOVED (the map is updated) and ASK (ASKING first).
    void send(std::string_view key, std::string encoded, ReplyHandler handler);

    /// The master now serving `slot`, or any known node if none does.
    ServerAddress owner(std::size_t slot) const;
    /// Every master in the map.
    std::vector<ServerAddress> masters() const;
    /// The connection send() writes a command for `key` on (while the map
    /// holds): a WAIT there covers the writes sent before it.
    std::shared_ptr<Connection> connection_for(std::string_view key);
    /// Sends RESP bytes to `master` itself, not routed by key (SCAN a node's keys).
    void send_to(const ServerAddress& master, std::string_view encoded, ReplyHandler handler);

    /// Reads the map again in the background (at most one read in flight and
    /// one every min_refresh_interval); any thread.
    void refresh();
    /// Runs on the loop after every map read, changed or not.
    std::function<void()> on_refreshed;

    /// Loop thread: closes every connection, failing what is queued.
    void stop_now();

    /// A connection to `node` (not started), with the cluster's settings;
    /// one to a node that is not a seed says, when it cannot reach it, that
    /// the address is the cluster's word (CLUSTER SLOTS, a redirect).
    std::shared_ptr<Connection> new_connection(const ServerAddress& node) const;

private:
    struct Request;
    struct Node {
        ServerAddress address;
        std::vector<std::shared_ptr<Connection>> pool;
        // Its connection was lost and is not back: it may be failing over.
        bool down = false;
    };
    static constexpr int max_redirects = 5;
    // TRYAGAIN: a script's keys are split between the two nodes of a slot
    // being migrated; it goes again (by the map) until the move ends, for
    // up to Config::timeout, as the cluster specification asks.
    static constexpr auto try_again_after = std::chrono::milliseconds(50);
    static constexpr auto min_refresh_interval = std::chrono::milliseconds(100);

    void route(const std::shared_ptr<Request>& request, std::optional<ServerAddress> to, bool asking);
    /// Routes `request` again by the map after try_again_after (reading the
    /// map meanwhile if `reread`); the command was not run. It waits in its
    /// slot's queue, and so do the slot's later commands, so they keep their
    /// order (a give-back parked while its node was down still goes before
    /// the owner's next acquire).
    void route_later(const std::shared_ptr<Request>& request, bool reread);
    /// Loop thread: the parked queues' timer.
    void arm_parked();
    void route_parked();
    /// A reply (or failure) of a request route() sent: redirects, retries, else the caller's handler.
    void on_reply(const std::shared_ptr<Request>& request, Failure error, Reply reply);
    /// The node's entry, connected on first use; mutex_ held.
    ClusterMap::Node node_index_locked(const ServerAddress& address);
    /// Connects the nodes map_ has come to know since; mutex_ held.
    void connect_new_nodes_locked();
    /// Where a command for `slot` goes (map_.route()); mutex_ held.
    ClusterMap::Node owner_index_locked(std::size_t slot) const;
    std::shared_ptr<Connection> connection(const ServerAddress& address, std::size_t pick);
    bool apply(const std::vector<SlotRange>& ranges);
    void read_map(std::size_t attempt);
    /// Loop thread: reads the map every Config::cluster_scan_interval, or a
    /// twentieth of it while a master's connection is down (a failover may be
    /// under way), so that clients with nothing in flight follow the cluster.
    void scan_later();

    asio::io_context& io_;
    const Config config_;
    asio::steady_timer refresh_timer_;
    asio::steady_timer scan_timer_;

    asio::steady_timer parked_timer_;

    mutable std::mutex mutex_;  // guards map_, nodes_, parked_ and parked_armed_
    ClusterMap map_;
    std::vector<std::unique_ptr<Node>> nodes_;  // map_'s nodes, at their numbers: indexes stay valid
    bool sharded_pubsub_ = false;
    // Requests waiting for route_later()'s timer, a queue per slot
    // (cluster_slots: keyless) in the order they came; stop_now() fails them.
    std::map<std::size_t, std::deque<std::shared_ptr<Request>>> parked_;
    bool parked_armed_ = false;

    // Loop thread only.
    bool reading_ = false, read_again_ = false, stopped_ = false;
    std::chrono::steady_clock::time_point last_read_{};
};

}  // namespace holdfast::detail
