// The transport: an event loop thread, command connections, pub/sub and scripts.
// It routes a command "for key K" to a connection; it knows nothing of locks.
#pragma once

#include <asio.hpp>

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "holdfast/config.hpp"
#include "transport/connection.hpp"
#include "transport/router.hpp"
#include "transport/script.hpp"
#include "transport/subscriber.hpp"
#include "transport/waiter_list.hpp"

namespace holdfast::detail {

struct ScriptRequest;  // transport/command.hpp

/// Thread safety: execute() and eval() may be called from any thread; their
/// handlers run on the event loop thread. subscriber() and run_on_loop()'s
/// function belong to the event loop thread.
class Transport {
public:
    explicit Transport(const Config& config);
    ~Transport();
    /// Fails what is queued, closes the connections and joins the loop thread.
    /// Idempotent; objects with timers on the loop are destroyed after it.
    void shutdown();
    Transport(const Transport&) = delete;
    Transport& operator=(const Transport&) = delete;

    /// Sends one command on the connection that serves `key` (empty: any).
    void execute(std::string_view key, const std::vector<std::string_view>& args, ReplyHandler handler);

    /// Runs `script` by EVALSHA; on NOSCRIPT (after SCRIPT FLUSH or a restart)
    /// sends it again by EVAL, which also caches it. Routed by keys[0]. Its
    /// trusted twin instead where the connection's user may run everything
    /// (Connection::user_unrestricted).
    void eval(const Script& script, std::span<const std::string_view> keys, std::span<const std::string_view> args,
              ReplyHandler handler);
    /// While one lives, the scripts this thread sends through eval() go whole
    /// (EVAL of the checked script), never sent again from their reply (as
    /// after NOSCRIPT, or a trusted twin refused): a command's place among its
    /// connection's commands is then its place on the server. For a release
    /// that may reach the server after its caller was told (hold/resends.hpp).
    class InOrder {
    public:
        InOrder();
        ~InOrder();
        InOrder(const InOrder&) = delete;
        InOrder& operator=(const InOrder&) = delete;
    };

    void eval(const Script& script, std::initializer_list<std::string_view> keys,
              std::initializer_list<std::string_view> args, ReplyHandler handler) {
        eval(script, std::span(keys.begin(), keys.size()), std::span(args.begin(), args.size()), std::move(handler));
    }

    /// What a WAIT after a write found: `replicas` waited for (0: no WAIT
    /// was sent), how many `acknowledged`, the master's address, and whether
    /// the master had lost its replicas (Connection::replicas_lost()).
    struct ReplicaAck {
        int replicas = 0;
        long long acknowledged = 0;
        std::string master;
        bool replicas_lost = false;
    };
    /// After a write for `key` (Config::replica_sync, docs/deployments.md):
    /// `WAIT <replicas> <replica_sync_timeout>` on the connection that sent
    /// the write, so it covers it; nothing when sync is off or no replica is
    /// needed (Connection::replicas(): under `required` one still is once
    /// seen). An error reply (an ACL refusing WAIT) counts as no replicas.
    void sync_replicas(std::string_view key, std::function<void(Failure, ReplicaAck)> done);
    /// Whether sync_replicas() would send a WAIT now: a cheap check first.
    bool syncs_replicas(std::string_view key) {
        return config_.replica_sync != ReplicaSync::off && writer_of(key).replicas() > 0;
    }

    /// The shard serving `key`: callers batching several keys in one script
    /// group them by this. One server: a connection index; a cluster: the
    /// slot (a script's keys must share one).
    std::size_t shard_of(std::string_view key) const;

    /// Where a command about every key must go, one entry per master: the one
    /// server (as Config names it), or each master of a cluster.
    std::vector<ServerAddress> masters() const;
    /// Sends one command to `master` (one of masters()), not routed by key:
    /// SCAN, which walks one node's keys.
    void execute_on(const ServerAddress& master, const std::vector<std::string_view>& args, ReplyHandler handler);

    /// Whether `channel`, announcing releases of the primitive stored under
    /// `key`, uses sharded pub/sub: where the cluster has it and the channel
    /// shares the key's slot. A channel in another slot (names such as "{}",
    /// "a}b" or a latch's "{tenant}:x") uses classic pub/sub, which any slot's
    /// script may publish to and every node delivers.
    bool shards_channel(std::string_view key, std::string_view channel) const;
    /// What a script releasing `key` publishes on `channel` with: "spublish"
    /// or "publish", as shards_channel() says.
    std::string_view publish_command(std::string_view key, std::string_view channel) const {
        return shards_channel(key, channel) ? "spublish" : "publish";
    }

    /// A waiter (an acquire operation) is told on_closed() when the client
    /// shuts down, before the connections close, so that it can end (and
    /// leave a queue) first; listed through its own `link`. Any thread;
    /// false if already shutting down.
    bool add_waiter(WaiterList::Link& link, const std::shared_ptr<ChannelListener>& waiter) {
        return waiters_.add(link, waiter);
    }
    void remove_waiter(WaiterList::Link& link) { waiters_.remove(link); }

    Subscriber& subscriber() { return router_->subscriber(); }
    asio::io_context& loop() { return io_; }
    void run_on_loop(std::function<void()> fn) { asio::post(io_, std::move(fn)); }
    bool on_loop_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

    const Config& config() const { return config_; }
    /// Where a command for `key` goes, "host:port", and what runs there
    /// (Connection::peer()). Any thread.
    std::pair<std::string, std::string> server_of(std::string_view key) { return writer_of(key).peer(); }

private:
    /// Sends RESP bytes to the server (cluster: the master) serving `key`.
    void dispatch(std::string_view key, std::string_view encoded, ReplyHandler handler) {
        router_->send(key, encoded, std::move(handler));
    }
    /// The connection a command for `key` is written on (one server or a
    /// cluster master): a WAIT there covers the writes before it.
    Connection& writer_of(std::string_view key) { return router_->connection_for(key); }
    /// Sends the EVALSHA request `evalsha` of `script` (`requested` or its
    /// trusted twin): on NOSCRIPT as EVAL; a twin refused by the ACL, as `requested`.
    void send_script(const Script& requested, const Script& script, std::shared_ptr<ScriptRequest> evalsha,
                     std::string_view key, ReplyHandler handler);
    void send_checked(const Script& requested, const Script& twin, std::shared_ptr<ScriptRequest> evalsha,
                      ReplyHandler handler);

    Config config_;
    // Before io_, so destroyed after it: a waiter a pending handler keeps
    // leaves the list as the loop's handlers go.
    WaiterList waiters_;
    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> work_;
    // The topology's one home: one server, behind sentinels, or a cluster.
    // After io_: destroyed before it.
    std::unique_ptr<Router> router_;
    // Set as shutdown begins: what is sent on the way out (a fair waiter
    // leaving its queue) goes as EVAL, since no NOSCRIPT retry would follow.
    std::atomic<bool> leaving_{false};
    // Loop thread: scripts this client loaded by EVAL, per server.
    std::set<std::pair<std::string, const Script*>> loaded_;
    std::thread thread_;
};

}  // namespace holdfast::detail
