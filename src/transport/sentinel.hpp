// Redis Sentinel (Topology::sentinel): where the master is, and when it moves.
// Over TLS (rediss-sentinel://) to the sentinels and the master alike.
// Follows Redis's "Sentinel clients" guidelines: ask the sentinels in order,
// connect to the address given, check ROLE there (Connection's handshake),
// ask again on every reconnect, and listen for +switch-master.
#pragma once

#include <asio.hpp>

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "holdfast/config.hpp"
#include "transport/connection.hpp"
#include "transport/tls.hpp"

namespace holdfast::detail {

/// Thread safety: io thread only.
class Sentinels : public std::enable_shared_from_this<Sentinels> {
public:
    Sentinels(asio::io_context& io, const Config& config);

    /// Asks the sentinels in order for the master's address. The error, when
    /// none answers with one, is a ConnectionError (AuthError if every
    /// answering sentinel refused AUTH) naming the master and what each said.
    void locate(LocateHandler done);

    /// Subscribes to +switch-master on one sentinel at a time (the next one
    /// after a drop); `on_switch` gets the new address of our master.
    void watch(std::function<void(const ServerAddress&)> on_switch);

    /// Loop thread: closes the watch connection.
    void stop_now();

private:
    struct Search;
    void ask(std::shared_ptr<Search> search);

    asio::io_context& io_;
    const Config config_;
    // rediss-sentinel://: the sentinels are asked over TLS too, with the same settings.
    const std::shared_ptr<asio::ssl::context> tls_context_;
    std::shared_ptr<Connection> watcher_;
    std::size_t next_watched_ = 0;
};

}  // namespace holdfast::detail
