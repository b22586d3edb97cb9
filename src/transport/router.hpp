// Where the transport's commands go: the one server (named in Config or by the
// sentinels) or a cluster's masters. Transport picks a router once, in its
// constructor, and asks it; no other part of the transport knows the topology.
#pragma once

#include <asio.hpp>

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "holdfast/config.hpp"
#include "transport/connection.hpp"
#include "transport/subscriber.hpp"

namespace holdfast::detail {

/// Thread safety: send(), send_to(), masters(), connection_for(),
/// shard_of() and shards_channel() from any thread; subscriber() and
/// stop_now() on the event loop thread.
class Router {
public:
    virtual ~Router() = default;

    /// Once the loop runs, before the first command: what routing needs from
    /// the servers first (a cluster's slot map). Blocks; throws what the
    /// servers' refusal or silence is (ConnectionError, ServerError).
    virtual void start() {}

    /// Sends RESP bytes to the server (in a cluster: the master) serving
    /// `key` (empty: any).
    virtual void send(std::string_view key, std::string_view encoded, ReplyHandler handler) = 0;
    /// Sends RESP bytes to `master` (one of masters()) itself, not routed by key.
    virtual void send_to(const ServerAddress& master, std::string_view encoded, ReplyHandler handler) = 0;
    /// Where a command about every key must go, one entry per master.
    virtual std::vector<ServerAddress> masters() const = 0;
    /// The connection send() writes a command for `key` on: a WAIT there
    /// covers the writes sent before it.
    virtual Connection& connection_for(std::string_view key) = 0;
    /// The shard serving `key` (Transport::shard_of).
    virtual std::size_t shard_of(std::string_view key) const = 0;
    /// Whether `channel`, announcing releases of `key`, uses sharded pub/sub
    /// (Transport::shards_channel).
    virtual bool shards_channel(std::string_view key, std::string_view channel) const = 0;

    virtual Subscriber& subscriber() = 0;
    /// Closes every connection (commands first, then pub/sub), failing what
    /// is queued.
    virtual void stop_now() = 0;
};

/// The router Config::topology asks for. One server: connections made (and
/// started); behind sentinels, the sentinels asked where the master is first,
/// on this thread, so the loop must not run yet (throws if none names it).
std::unique_ptr<Router> make_router(asio::io_context& io, const Config& config);

}  // namespace holdfast::detail
