// Pub/sub: one SUBSCRIBE per channel shared by all local listeners,
// unsubscribed when the last one leaves. One server: one connection. A
// cluster: a connection per master used, each channel subscribed at the node
// routing names (sharded pub/sub: the master of its slot), moved when the map changes.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "transport/channel_listener.hpp"
#include "transport/connection.hpp"

namespace holdfast::detail {

/// Thread safety: io thread only, but for channel_count().
class Subscriber {
public:
    /// Where channels are subscribed, in a cluster.
    struct Routing {
        /// Where `channel` is subscribed: sharded (SSUBSCRIBE, smessage
        /// pushes) at its slot's master, else anywhere classic pub/sub reaches.
        std::function<ServerAddress(const std::string& channel, bool sharded)> node_of;
        /// A new connection (not started) to `node`.
        std::function<std::shared_ptr<Connection>(const ServerAddress& node)> connect;
        /// A subscription was lost to a topology change (its slot moved):
        /// read the map again, then call relocate().
        std::function<void()> lost;
    };

    /// Pings the server every `keepalive` while subscribed, so a connection
    /// that silently died (half-open TCP) is noticed by the connection's
    /// reply timeout and replaced, instead of leaving waiters on their TTLs.
    Subscriber(asio::io_context& io, std::shared_ptr<Connection> connection, std::chrono::milliseconds keepalive);
    /// A cluster's: connections are made (and started) on first use per node.
    Subscriber(asio::io_context& io, Routing routing, std::chrono::milliseconds keepalive);

    /// Adds a listener to `channel`, subscribing if it is the first (with
    /// SSUBSCRIBE if `sharded`: a cluster's, Transport::shards_channel). When
    /// the subscription is already active, on_subscribed() runs before this returns.
    void add(const std::string& channel, std::shared_ptr<ChannelListener> listener, bool sharded = false);
    /// Removes the listener; the last one out unsubscribes.
    void remove(const std::string& channel, const ChannelListener* listener);
    /// Whether `channel` has listeners and its subscription is active now (a
    /// listener added now is told on_subscribed() at once).
    bool active(std::string_view channel) const;

    /// Channels with at least one listener. Any thread (tests, diagnostics).
    std::size_t channel_count() const { return listened_.load(std::memory_order_relaxed); }

    /// Loop thread: closes the connections and tells every listener.
    void stop_now();
    /// Loop thread, after the cluster map was read: subscribes each channel
    /// at its node (routing.node_of) if it is not subscribed there.
    void relocate();

private:
    // One connection to one server, and the (un)subscribe commands sent on it,
    // oldest first: each gets one answer, a confirmation or an error reply
    // (an error names no channel).
    struct Link {
        ServerAddress node;
        std::shared_ptr<Connection> connection;
        std::deque<std::pair<std::string, bool>> unanswered;  // channel, subscribe?
    };
    struct Channel {
        std::vector<std::shared_ptr<ChannelListener>> listeners;
        bool sharded = false;    // SSUBSCRIBE, not SUBSCRIBE
        bool wanted = false;     // the last command sent for it was SUBSCRIBE
        bool active = false;     // confirmed and nothing pending
        int pending_replies = 0; // (UN)SUBSCRIBE replies still to come from `link`
        Link* link = nullptr;    // where it is (being) subscribed; replies from others are stale
    };

    Link& link_for(const ServerAddress& node);
    Link& add_link(ServerAddress node, std::shared_ptr<Connection> connection);
    /// Subscribes at the channel's node (now, or once that link is ready).
    void subscribe(const std::string& channel, Channel& entry);
    void on_ready(Link& link);
    void ping_later();
    void on_push(Link& link, const Reply& reply);
    /// The server answered an (un)subscribe of `channel` with an error reply.
    void on_refused(Link& link, const std::string& channel, bool subscribe, const Reply& reply);
    void send(Link& link, bool subscribe, const std::string& channel);

    Routing routing_;
    std::vector<std::unique_ptr<Link>> links_;
    asio::steady_timer keepalive_timer_;
    const std::chrono::milliseconds keepalive_;
    std::map<std::string, Channel, std::less<>> channels_;
    std::atomic<std::size_t> listened_{0};
};

}  // namespace holdfast::detail
