// holdfast::Client: one connection set to one Redis server, shared by every lock.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "holdfast/export.hpp"
#include "holdfast/config.hpp"
#include "holdfast/metrics.hpp"

namespace holdfast {

namespace detail {
class ClientCore;
struct ClientAccess;
}

/// A client owns an event loop thread, a few pipelined command connections,
/// one pub/sub connection and the watchdog that renews its locks. Make one per
/// process and share it: locks made from it are cheap handles.
///
/// Thread safety: every member may be called from any thread.
/// Lifetime: outlive every Lock made from it. Destroying it fails the commands
/// still queued, stops renewing its locks (they expire after their lease) and
/// joins its thread.
class HOLDFAST_EXPORT Client {
public:
    /// Connects and checks the server answers (PING, after AUTH and SELECT).
    /// Throws ConnectionError naming host:port if it cannot within
    /// config.timeout, AuthError if the credentials are refused, and
    /// std::invalid_argument for a malformed URI or setting.
    explicit Client(const Config& config);
    /// As above, from redis://[user:password@]host[:port][/db] or unix:///path.sock.
    explicit Client(std::string_view uri);
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    /// This client's random UUID, the first half of every owner id it makes.
    const std::string& id() const;
    /// Owner id of the calling thread: "<uuid>:<thread-id>".
    std::string current_owner() const;
    /// A fresh owner id for async code that hops threads: "<uuid>:<n>", never
    /// equal to a thread's id nor to an earlier one from this client.
    std::string new_owner();

    /// The configuration in use: as given, with client_name filled in.
    const Config& config() const;

    /// Counters and histograms since this client was made (docs/operations.md);
    /// all zero with Config::metrics off. Cheap enough to read every scrape.
    Metrics metrics() const;

private:
    friend struct detail::ClientAccess;  // the library's own way to the machinery behind the locks
    std::unique_ptr<detail::ClientCore> core_;
};

}  // namespace holdfast
