#include "transport/subscriber.hpp"

#include <algorithm>

#include "common/quoted.hpp"
#include "holdfast/errors.hpp"
#include "transport/command.hpp"

namespace holdfast::detail {

namespace {

// What a subscribed connection pushes unasked; anything else (PING's reply,
// handshake replies) answers a command in order.
bool is_pubsub_push(const Reply& reply) {
    if (!reply.is_array() || reply.elements.empty()) return false;
    const std::string& kind = reply.elements[0].str;
    return kind == "message" || kind == "subscribe" || kind == "unsubscribe";
}

}  // namespace

Subscriber::Subscriber(asio::io_context& io, std::shared_ptr<Connection> connection,
                       std::chrono::milliseconds keepalive)
    : connection_(std::move(connection)), keepalive_timer_(io), keepalive_(keepalive) {
    connection_->on_ready = [this] { on_ready(); };
    // An error reply on an established subscriber connection answers the
    // oldest (un)subscribe (PING, the only other command, is not refused).
    connection_->is_push = [this](const Reply& reply) {
        return is_pubsub_push(reply) || (reply.is_error() && !unanswered_.empty());
    };
    connection_->on_push = [this](Reply reply) { on_push(reply); };
    ping_later();
}

void Subscriber::ping_later() {
    keepalive_timer_.expires_after(keepalive_);
    keepalive_timer_.async_wait([this](asio::error_code ec) {
        if (ec) return;
        // The reply itself does not matter: an unanswered PING is what the
        // connection's reply timeout catches.
        if (connection_->ready() && !channels_.empty())
            connection_->submit(encode_command({"PING"}), [](std::exception_ptr, Reply) {});
        ping_later();
    });
}

void Subscriber::add(const std::string& channel, std::shared_ptr<ChannelListener> listener) {
    auto& entry = channels_[channel];
    entry.listeners.push_back(listener);
    if (entry.listeners.size() == 1) listened_.fetch_add(1, std::memory_order_relaxed);
    if (entry.active) {
        listener->on_subscribed();
        return;
    }
    if (!entry.wanted) {
        entry.wanted = true;
        if (connection_->ready()) send("SUBSCRIBE", channel);
    }
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
    if (connection_->ready()) send("UNSUBSCRIBE", channel);
    if (it->second.pending_replies == 0) channels_.erase(it);  // not connected: nothing to undo
}

void Subscriber::send(std::string_view command, const std::string& channel) {
    ++channels_[channel].pending_replies;
    unanswered_.emplace_back(channel, command == "SUBSCRIBE");
    connection_->submit(encode_command({command, channel}), nullptr);
}

// A new connection has no subscriptions: forget what was pending on the old
// one and subscribe again to every channel someone still waits on.
void Subscriber::on_ready() {
    unanswered_.clear();
    for (auto it = channels_.begin(); it != channels_.end();) {
        it->second.pending_replies = 0;
        it->second.active = false;
        if (!it->second.wanted) {
            it = channels_.erase(it);
            continue;
        }
        send("SUBSCRIBE", it->first);
        ++it;
    }
}

void Subscriber::offer(const std::string& channel, std::size_t count) { offer_after(channel, count, nullptr); }

void Subscriber::offer_after(const std::string& channel, std::size_t count, const ChannelListener* after) {
    auto it = channels_.find(channel);
    if (it == channels_.end()) return;
    // Copy: a listener may leave (and so edit the list) while it is woken.
    auto listeners = it->second.listeners;
    auto next = listeners.begin();
    if (after) {
        next = std::find_if(listeners.begin(), listeners.end(), [after](const auto& l) { return l.get() == after; });
        if (next == listeners.end()) return;
        ++next;
    }
    for (; next != listeners.end() && count > 0; ++next)
        if ((*next)->on_wake() && count != wakes::all) --count;
}

void Subscriber::stop_now() {
    keepalive_timer_.cancel();
    connection_->stop_now();
    auto channels = std::move(channels_);
    channels_.clear();
    listened_.store(0, std::memory_order_relaxed);
    for (auto& [name, entry] : channels)
        for (auto& l : entry.listeners) l->on_closed();
}

void Subscriber::on_push(const Reply& reply) {
    if (reply.is_error()) {
        if (unanswered_.empty()) return;
        auto [channel, subscribe] = unanswered_.front();
        unanswered_.pop_front();
        return on_refused(channel, subscribe, reply);
    }
    if (!reply.is_array() || reply.elements.size() < 3) return;
    const std::string& kind = reply.elements[0].str;
    const std::string& channel = reply.elements[1].str;
    if ((kind == "subscribe" || kind == "unsubscribe") && !unanswered_.empty()) unanswered_.pop_front();
    auto it = channels_.find(channel);
    if (it == channels_.end()) return;
    auto& entry = it->second;
    if (kind == "message") {
        if (entry.listeners.empty()) return;
        return offer(channel, entry.listeners.front()->wakes(reply.elements[2].str));
    }
    if (kind != "subscribe" && kind != "unsubscribe") return;
    if (entry.pending_replies > 0) --entry.pending_replies;
    if (entry.pending_replies > 0) return;
    if (!entry.wanted) {
        channels_.erase(it);
        return;
    }
    if (kind == "subscribe" && !entry.active) {
        entry.active = true;
        auto listeners = entry.listeners;
        for (auto& l : listeners) l->on_subscribed();
    }
}

}  // namespace holdfast::detail

namespace holdfast::detail {

// No message will come on a channel the server would not subscribe to: its
// listeners are failed at once rather than left to their TTL fallback.
void Subscriber::on_refused(const std::string& channel, bool subscribe, const Reply& reply) {
    auto it = channels_.find(channel);
    if (it == channels_.end()) return;
    auto& entry = it->second;
    if (entry.pending_replies > 0) --entry.pending_replies;
    if (!subscribe || !entry.wanted) {
        if (entry.pending_replies == 0 && !entry.wanted) channels_.erase(it);
        return;
    }
    auto listeners = std::move(entry.listeners);
    entry.listeners.clear();
    entry.wanted = false;
    entry.active = false;
    if (!listeners.empty()) listened_.fetch_sub(1, std::memory_order_relaxed);
    if (entry.pending_replies == 0) channels_.erase(it);
    auto error = std::make_exception_ptr(ServerError(
        "holdfast: " + connection_->server() + " refused to SUBSCRIBE to " + quoted(channel) + ": " + reply.str +
        "; a waiter needs it to be woken: grant the ACL user the channel (ACL SETUSER <user> &<channel pattern>; "
        "docs/errors.md lists the rules each primitive needs)"));
    for (auto& listener : listeners) listener->on_refused(error);
}

}  // namespace holdfast::detail
