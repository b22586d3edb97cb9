// Redis Sentinel (Topology::sentinel): where the master is, and when it moves.
// Over TLS (rediss-sentinel://) to the sentinels and the master alike.
// Follows Redis's "Sentinel clients" guidelines: ask the sentinels in order,
// connect to the address given, check ROLE there (Connection's handshake),
// and listen for +switch-master; beyond them, it listens to every sentinel
// and asks each again on a timer, so one hung or dead sentinel cannot hide a
// failover, and trusts the newest configuration epoch, so one that lags
// behind (restarted from an old configuration, or cut off from the others)
// cannot send it back.
#pragma once

#include <asio.hpp>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
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

    /// The first time (Client's constructor): asks the sentinels in order for
    /// the master's address, the next as soon as one fails or after 500 ms
    /// while those asked are silent (a hung sentinel), and takes the first
    /// address any gives. The error, when none answers with one, is a
    /// ConnectionError (AuthError if every answering sentinel refused AUTH)
    /// naming the master and what each said. After that (every reconnect): the
    /// address the sentinels named last, at once, and asks them again (check),
    /// so a connection that found no master there moves when they answer.
    void locate(LocateHandler done);

    /// Keeps a connection to every sentinel, subscribed to +switch-master, and
    /// asks each where the master is when it connects, when it tells a switch,
    /// and every Config::sentinel_scan_interval. A sentinel silent for longer
    /// than Config::timeout is reconnected (Connection's reply timeout).
    /// `on_master` is told the master's address when the sentinels move it,
    /// and again every interval, so that a connection made meanwhile to an
    /// address since replaced leaves it too.
    void watch(std::function<void(const ServerAddress&)> on_master);

    /// Loop thread: closes the sentinel connections and stops the timer.
    void stop_now();

private:
    struct Search;
    void ask(std::shared_ptr<Search> search);
    /// Ends `search` with its outcome: its hedge timer and the asks still under way are dropped.
    void tell(Search& search, Failure error, ServerAddress master);

    /// What one sentinel said last: the master's address, in its
    /// configuration epoch (-1: it does not say, SENTINEL MASTER refused).
    struct Answer {
        ServerAddress master;
        long long epoch = -1;
        std::uint64_t order = 0;  // later answers are higher
    };
    /// The connection to one sentinel. `asking`: answers are due on it.
    struct Watcher {
        std::shared_ptr<Connection> connection;
        bool asking = false;
        std::optional<Answer> said;  // kept when the connection drops, until it answers again
    };
    /// Asks the sentinel of watchers_[i] where the master is.
    void check(std::size_t i);
    void check_all();
    void tick();
    /// Records watchers_[i]'s answer and follows the sentinels' newest one.
    void heard(std::size_t i, ServerAddress master, long long epoch);

    asio::io_context& io_;
    const Config config_;
    // rediss-sentinel://: the sentinels are asked over TLS too, with the same settings.
    const std::shared_ptr<asio::ssl::context> tls_context_;
    std::optional<ServerAddress> master_;  // the master followed: the first locate()'s, then heard()'s
    std::vector<Watcher> watchers_;        // one per sentinel, in Config::servers order; never resized
    std::uint64_t answers_ = 0;
    std::function<void(const ServerAddress&)> on_master_;
    asio::steady_timer timer_;
    bool stopped_ = false;
};

}  // namespace holdfast::detail
