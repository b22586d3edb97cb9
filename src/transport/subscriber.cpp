#include "transport/subscriber.hpp"

#include "common/quoted.hpp"
#include "errors/acl_advice.hpp"
#include "transport/command.hpp"

namespace holdfast::detail {

namespace {

// What a subscribed connection pushes unasked; anything else (PING's reply,
// handshake replies) answers a command in order.
bool is_pubsub_push(const Reply& reply) {
    if (!reply.is_array() || reply.elements.empty()) return false;
    const std::string& kind = reply.elements[0].str;
    return kind == "message" || kind == "subscribe" || kind == "unsubscribe" || kind == "smessage" ||
           kind == "ssubscribe" || kind == "sunsubscribe";
}

bool is_confirmation(const std::string& kind) {
    return kind == "subscribe" || kind == "unsubscribe" || kind == "ssubscribe" || kind == "sunsubscribe";
}

// Errors a topology change explains: the channel's slot is (being) served elsewhere.
bool is_redirect(const Reply& reply) {
    return reply.is_error_code("MOVED") || reply.is_error_code("ASK") || reply.is_error_code("TRYAGAIN") ||
           reply.is_error_code("CLUSTERDOWN");
}

}  // namespace

Subscriber::Subscriber(asio::io_context& io, std::shared_ptr<Connection> connection,
                       std::chrono::milliseconds keepalive)
    : keepalive_timer_(io), keepalive_(keepalive) {
    routing_.node_of = [](const std::string&, bool) { return ServerAddress{}; };
    add_link(ServerAddress{}, std::move(connection));
    ping_later();
}

Subscriber::Subscriber(asio::io_context& io, Routing routing, std::chrono::milliseconds keepalive)
    : routing_(std::move(routing)), keepalive_timer_(io), keepalive_(keepalive) {
    ping_later();
}

Subscriber::Link& Subscriber::add_link(ServerAddress node, std::shared_ptr<Connection> connection) {
    links_.push_back(std::make_unique<Link>(Link{std::move(node), std::move(connection), {}}));
    Link* link = links_.back().get();
    link->connection->on_ready = [this, link] { on_ready(*link); };
    // An error reply on an established subscriber connection answers the
    // oldest (un)subscribe (PING, the only other command, is not refused).
    link->connection->is_push = [link](const Reply& reply) {
        return is_pubsub_push(reply) || (reply.is_error() && !link->unanswered.empty());
    };
    link->connection->on_push = [this, link](const Reply& reply) { on_push(*link, reply); };
    return *link;
}

Subscriber::Link& Subscriber::link_for(const ServerAddress& node) {
    for (auto& link : links_)
        if (link->node == node) return *link;
    Link& link = add_link(node, routing_.connect(node));
    link.connection->start();
    return link;
}

void Subscriber::ping_later() {
    keepalive_timer_.expires_after(keepalive_);
    keepalive_timer_.async_wait([this](asio::error_code ec) {
        if (ec) return;
        // The reply itself does not matter: an unanswered PING is what the
        // connection's reply timeout catches.
        if (!channels_.empty())
            for (auto& link : links_)
                if (link->connection->ready())
                    link->connection->submit(encode_command({"PING"}), [](Failure, Reply) {});
        ping_later();
    });
}

void Subscriber::add(const std::string& channel, std::shared_ptr<ChannelListener> listener, bool sharded) {
    auto& entry = channels_[channel];
    if (entry.listeners.empty() && !entry.wanted) entry.sharded = sharded;
    entry.listeners.push_back(listener);
    if (entry.listeners.size() == 1) listened_.fetch_add(1, std::memory_order_relaxed);
    if (entry.active) {
        listener->on_subscribed();
        return;
    }
    if (!entry.wanted) {
        entry.wanted = true;
        subscribe(channel, entry);
    }
}

void Subscriber::subscribe(const std::string& channel, Channel& entry) {
    Link& link = link_for(routing_.node_of(channel, entry.sharded));
    entry.link = &link;
    entry.active = false;
    entry.pending_replies = 0;
    if (link.connection->ready()) send(link, true, channel);
}

void Subscriber::remove(const std::string& channel, const ChannelListener* listener) {
    auto it = channels_.find(channel);
    if (it == channels_.end()) return;
    auto& listeners = it->second.listeners;
    if (std::erase_if(listeners, [listener](const auto& l) { return l.get() == listener; }) == 0) return;
    if (!listeners.empty()) return;
    listened_.fetch_sub(1, std::memory_order_relaxed);
    it->second.wanted = false;
    it->second.active = false;
    if (Link* link = it->second.link; link && link->connection->ready()) send(*link, false, channel);
    if (it->second.pending_replies == 0) channels_.erase(it);  // not connected: nothing to undo
}

void Subscriber::send(Link& link, bool subscribe, const std::string& channel) {
    auto& entry = channels_[channel];
    if (entry.link == &link) ++entry.pending_replies;
    link.unanswered.emplace_back(channel, subscribe);
    const std::string_view command = entry.sharded ? (subscribe ? "SSUBSCRIBE" : "SUNSUBSCRIBE")
                                                   : (subscribe ? "SUBSCRIBE" : "UNSUBSCRIBE");
    link.connection->submit(encode_command({command, channel}), nullptr);
}

// A new connection has no subscriptions: forget what was pending on the old
// one and subscribe again to every channel someone still waits on.
void Subscriber::on_ready(Link& link) {
    link.unanswered.clear();
    for (auto it = channels_.begin(); it != channels_.end();) {
        auto& entry = it->second;
        if (entry.link != &link) {
            ++it;
            continue;
        }
        entry.pending_replies = 0;
        entry.active = false;
        if (!entry.wanted) {
            it = channels_.erase(it);
            continue;
        }
        send(link, true, it->first);
        ++it;
    }
}

void Subscriber::relocate() {
    for (auto& [channel, entry] : channels_) {
        if (!entry.wanted) continue;
        const ServerAddress node = routing_.node_of(channel, entry.sharded);
        if (entry.link && entry.link->node == node) continue;
        // Still subscribed at the old node: leave it (its replies are stale now).
        if (Link* old = entry.link; old && old->connection->ready()) {
            entry.link = nullptr;
            send(*old, false, channel);
        }
        subscribe(channel, entry);
    }
}

bool Subscriber::active(std::string_view channel) const {
    auto it = channels_.find(channel);
    return it != channels_.end() && !it->second.listeners.empty() && it->second.active;
}

void Subscriber::stop_now() {
    keepalive_timer_.cancel();
    for (auto& link : links_) link->connection->stop_now();
    auto channels = std::move(channels_);
    channels_.clear();
    listened_.store(0, std::memory_order_relaxed);
    for (auto& [name, entry] : channels)
        for (auto& l : entry.listeners) l->on_closed();
}

void Subscriber::on_push(Link& link, const Reply& reply) {
    if (reply.is_error()) {
        if (link.unanswered.empty()) return;
        auto [channel, subscribe] = link.unanswered.front();
        link.unanswered.pop_front();
        return on_refused(link, channel, subscribe, reply);
    }
    if (!reply.is_array() || reply.elements.size() < 3) return;
    const std::string& kind = reply.elements[0].str;
    const std::string& channel = reply.elements[1].str;
    // An answer to the oldest (un)subscribe, or (sharded pub/sub) the server
    // dropping a channel whose slot moved away.
    bool answer = false;
    if (is_confirmation(kind) && !link.unanswered.empty() && link.unanswered.front().first == channel &&
        link.unanswered.front().second == (kind == "subscribe" || kind == "ssubscribe")) {
        link.unanswered.pop_front();
        answer = true;
    }
    auto it = channels_.find(channel);
    if (it == channels_.end()) return;
    auto& entry = it->second;
    if (kind == "message" || kind == "smessage") {
        const std::string_view payload = reply.elements[2].str;
        // A listener may leave (and so edit the list, or drop the channel)
        // while it hears the message. One listener, the usual case, is
        // held without copying the list.
        if (entry.listeners.size() == 1) {
            const auto only = entry.listeners.front();
            return only->on_message(payload);
        }
        const auto listeners = entry.listeners;
        for (const auto& l : listeners) l->on_message(payload);
        return;
    }
    if (!is_confirmation(kind) || entry.link != &link) return;  // stale: from where it was before
    if (!answer) {
        if (!entry.wanted || kind != "sunsubscribe") return;
        entry.link = nullptr;
        entry.active = false;
        entry.pending_replies = 0;
        if (routing_.lost) routing_.lost();
        return;
    }
    if (entry.pending_replies > 0) --entry.pending_replies;
    if (entry.pending_replies > 0) return;
    if (!entry.wanted) {
        channels_.erase(it);
        return;
    }
    if ((kind == "subscribe" || kind == "ssubscribe") && !entry.active) {
        entry.active = true;
        auto listeners = entry.listeners;
        for (auto& l : listeners) l->on_subscribed();
    }
}

}  // namespace holdfast::detail

namespace holdfast::detail {

// No message will come on a channel the server would not subscribe to: its
// listeners are failed at once rather than left to their TTL fallback.
void Subscriber::on_refused(Link& link, const std::string& channel, bool subscribe, const Reply& reply) {
    auto it = channels_.find(channel);
    if (it == channels_.end()) return;
    auto& entry = it->second;
    if (entry.link != &link) return;  // stale
    if (entry.pending_replies > 0) --entry.pending_replies;
    if (!subscribe || !entry.wanted) {
        if (entry.pending_replies == 0 && !entry.wanted) channels_.erase(it);
        return;
    }
    // The map was out of date: subscribe again where the new one says.
    if (is_redirect(reply) && routing_.lost) {
        entry.link = nullptr;
        entry.active = false;
        entry.pending_replies = 0;
        routing_.lost();
        return;
    }
    const bool sharded = entry.sharded;
    auto listeners = std::move(entry.listeners);
    entry.listeners.clear();
    entry.wanted = false;
    entry.active = false;
    if (!listeners.empty()) listened_.fetch_sub(1, std::memory_order_relaxed);
    if (entry.pending_replies == 0) channels_.erase(it);
    const Failure error = Failure::server(
        std::string(reply.code()),
        "holdfast: " + link.connection->server() + " refused to " + (sharded ? "SSUBSCRIBE" : "SUBSCRIBE") + " to " +
            quoted(channel) + ", which a waiter needs to be woken: " + reply.str +
            acl_advice(reply.str, link.connection->config().username, channel));
    for (auto& listener : listeners) listener->on_refused(error);
}

}  // namespace holdfast::detail
