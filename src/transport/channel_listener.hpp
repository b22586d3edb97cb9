// What the subscriber tells whoever listens on a channel. The transport only
// delivers: what a message means is the listener's business.
#pragma once

#include <string_view>

#include "errors/failure.hpp"

namespace holdfast::detail {

/// Something listening on a channel. Runs on the io thread.
class ChannelListener {
public:
    virtual ~ChannelListener() = default;
    /// The subscription is active (first time, and again after a reconnect,
    /// when messages may have been missed).
    virtual void on_subscribed() = 0;
    /// A message published on the channel.
    virtual void on_message(std::string_view payload) = 0;
    /// The client is shutting down: no message will come.
    virtual void on_closed() = 0;
    /// The server refused to SUBSCRIBE to the channel (an ACL without the
    /// channel, say): no message will come, and the listener was let go.
    /// `error` names the channel, the server and the reply.
    virtual void on_refused(const Failure& error) = 0;
};

}  // namespace holdfast::detail
