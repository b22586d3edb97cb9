// Pub/sub for one server: one connection, one SUBSCRIBE per channel shared by
// all local listeners, unsubscribed when the last one leaves.
#pragma once

#include <atomic>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "transport/connection.hpp"

namespace holdfast::detail {

/// Something waiting on a channel. Runs on the io thread.
namespace wakes {
inline constexpr std::size_t all = static_cast<std::size_t>(-1);
}

class ChannelListener {
public:
    virtual ~ChannelListener() = default;
    /// The subscription is active (first time, and again after a reconnect,
    /// when messages may have been missed).
    virtual void on_subscribed() = 0;
    /// How many listeners of this channel a message wakes (the channel's
    /// meaning, the same for all its listeners): Wakes::all, or a count.
    virtual std::size_t wakes(std::string_view payload) const = 0;
    /// A wake-up, offered in the order listeners joined; returning true uses
    /// it up, false passes it on to the next listener.
    virtual bool on_wake() = 0;
    /// The client is shutting down: no message will come.
    virtual void on_closed() = 0;
    /// The server refused to SUBSCRIBE to the channel (an ACL without the
    /// channel, say): no message will come. `error` names the channel, the
    /// server and the reply.
    virtual void on_refused(std::exception_ptr error) = 0;
};

/// Thread safety: io thread only, but for channel_count().
class Subscriber {
public:
    /// Pings the server every `keepalive` while subscribed, so a connection
    /// that silently died (half-open TCP) is noticed by the connection's
    /// reply timeout and replaced, instead of leaving waiters on their TTLs.
    Subscriber(asio::io_context& io, std::shared_ptr<Connection> connection, std::chrono::milliseconds keepalive);

    /// Adds a listener to `channel`, subscribing if it is the first. When the
    /// subscription is already active, on_subscribed() runs before this returns.
    void add(const std::string& channel, std::shared_ptr<ChannelListener> listener);
    /// Removes the listener; the last one out unsubscribes.
    void remove(const std::string& channel, const ChannelListener* listener);
    /// Hands `count` wake-ups to the channel's listeners, as a message would:
    /// a listener that took a wake-up it cannot use passes it on.
    void offer(const std::string& channel, std::size_t count);
    /// As offer(), to the listeners that joined after `after` only, so a
    /// wake-up passed on moves down the list and cannot circle back.
    void offer_after(const std::string& channel, std::size_t count, const ChannelListener* after);

    /// Channels with at least one listener. Any thread (tests, diagnostics).
    std::size_t channel_count() const { return listened_.load(std::memory_order_relaxed); }

    /// Loop thread: closes the connection and tells every listener.
    void stop_now();

private:
    struct Channel {
        std::vector<std::shared_ptr<ChannelListener>> listeners;
        bool wanted = false;     // the last command sent for it was SUBSCRIBE
        bool active = false;     // confirmed and nothing pending
        int pending_replies = 0; // SUBSCRIBE/UNSUBSCRIBE replies still to come
    };

    void on_ready();
    void ping_later();
    void on_push(const Reply& reply);
    /// The server answered an (un)subscribe of `channel` with an error reply.
    void on_refused(const std::string& channel, bool subscribe, const Reply& reply);
    void send(std::string_view command, const std::string& channel);

    std::shared_ptr<Connection> connection_;
    asio::steady_timer keepalive_timer_;
    const std::chrono::milliseconds keepalive_;
    std::map<std::string, Channel, std::less<>> channels_;
    // (Un)subscribe commands sent on this connection, oldest first: each gets
    // one answer, a confirmation or an error reply (an error names no channel).
    std::deque<std::pair<std::string, bool>> unanswered_;  // channel, SUBSCRIBE?
    std::atomic<std::size_t> listened_{0};
};

}  // namespace holdfast::detail
