// One connection to one Redis server: pipelined commands, reconnect with backoff.
#pragma once

#include <asio.hpp>
#include <asio/generic/stream_protocol.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "errors/failure.hpp"
#include "holdfast/config.hpp"
#include "transport/reader_machine.hpp"
#include "transport/reply.hpp"
#include "transport/session_machine.hpp"
#include "transport/tls.hpp"

namespace holdfast::detail {

/// Completion of one command: either a transport failure (error set) or a
/// reply, which may itself be a server error reply.
using ReplyHandler = std::function<void(Failure error, Reply reply)>;

/// Where a Connection connects next (Topology::sentinel: the master the
/// sentinels name), asked before each connect attempt. `error`, when no
/// address: its code tells whether asking again can help (auth_refused, tls_failed cannot).
using LocateHandler = std::function<void(Failure error, ServerAddress address)>;
using Locator = std::function<void(LocateHandler)>;

/// A connection pipelines: every command submitted is appended to one output
/// buffer and its handler to a FIFO; replies complete handlers in order.
///
/// Writes: on an idle connection (no reply due) the submitting thread sends
/// its command itself with a non-blocking send(), so it costs no thread
/// switch. While replies are due, commands queue up and the loop thread sends
/// them in one batch once it has handled the replies it read (those of every
/// connection ready then), so a busy connection costs one syscall per batch,
/// not per command. Only a full socket buffer hands a write to the loop's
/// async_write.
///
/// TLS (config.tls.enabled): the TLS handshake follows the TCP connect, then
/// the same AUTH/SELECT/PING handshake. The TlsSession encrypts into memory,
/// so writes take the same path as plain ones: the writer encrypts its batch
/// (under the session's mutex, as the loop thread decrypts what it reads) and
/// sends the ciphertext itself; no thread switch per command.
///
/// Session life (locate, connect, TLS, handshake, ready, backoff, stop): a
/// SessionMachine decides, without I/O; the Connection feeds it what Asio
/// reports and carries out its actions. The writer and the reader are the
/// Connection's own.
///
/// Thread safety: submit() may be called from any thread; everything else runs
/// on the io_context's thread, including every handler.
///
/// Behind a sentinel (Topology::sentinel, `locate` set) a -READONLY reply
/// means the master was demoted: that command did not run, so it is queued
/// again for the next master, and the connection reconnects through `locate`.
///
/// Faults: commands in flight when the connection drops fail with
/// errc::connection_lost (they may or may not have run). Commands submitted while
/// disconnected wait for the reconnect up to Config::timeout (submit_one_attempt:
/// for one attempt), then fail naming the server (errc::not_connected); a refusal
/// that retrying cannot fix (credentials, a certificate) fails them at once
/// (errc::auth_refused, tls_failed), and so every command submitted after it,
/// until a reconnect succeeds (the attempts go on meanwhile). A
/// command without a reply within Config::timeout (after what a WAIT ahead of it
/// may hold: submit's `hold`) closes the connection (a stalled server), which
/// fails the commands behind it too, unless the server answered some command
/// within Config::timeout: a reply late behind a deep queue of this client's
/// own commands is not a stall.
/// What the handshake's rights probe says runs there ({may, SERVER_NAME or
/// 'redis', VALKEY_VERSION or REDIS_VERSION}, from Lua: no ACL needed):
/// "Redis 7.0.15", "Valkey 8.0.1"; "" for any other reply (a refusal).
std::string software_of(const Reply& probe);

class Connection : public std::enable_shared_from_this<Connection> {
public:
    Connection(asio::io_context& io, const Config& config);
    ~Connection();

    /// Starts connecting; reconnects after every drop until stopped.
    void start();
    /// Loop thread: closes for good, failing every queued and in-flight
    /// command, once what is queued to send has been sent (without blocking).
    void stop_now();

    /// Queues RESP bytes; `handler` (may be empty for pub/sub commands) runs on
    /// the io thread with the reply. `hold`: the server may keep the reply
    /// that long before answering (a WAIT's timeout), and keeps the commands
    /// behind it waiting too; Config::timeout counts for them from then on.
    void submit(std::string_view encoded, ReplyHandler handler,
                std::chrono::milliseconds hold = std::chrono::milliseconds::zero());
    /// As submit(), but while the connection is down the command waits for one
    /// connect attempt only (the current one, or none if the last failed): it
    /// fails with that attempt's error rather than waiting for reconnects up to
    /// Config::timeout. A cluster seed refusing connections: the next is tried at once.
    void submit_one_attempt(std::string_view encoded, ReplyHandler handler);
    /// As submit(), after an ASKING (a cluster's -ASK redirect): the two go
    /// out back-to-back, so no other command can take the one-shot ASKING.
    void submit_asking(std::string_view encoded, ReplyHandler handler);

    /// Subscriber mode: replies that is_push() recognises (pub/sub messages),
    /// and replies with no pending handler, go to on_push, not to the FIFO.
    std::function<bool(const Reply&)> is_push;
    std::function<void(const Reply&)> on_push;
    /// Runs on the io thread each time the connection is (re)established and
    /// authenticated, before queued commands are written.
    std::function<void()> on_ready;
    /// Runs on the io thread each time an established connection is lost
    /// (a cluster node that may be failing over).
    std::function<void()> on_lost;
    /// Set: asked where to connect before each attempt, instead of the
    /// config's host and port (a Sentinel master).
    Locator locate;
    /// Set before start(): the address is what a cluster announced (CLUSTER
    /// SLOTS, a redirect), not the user's; errors reaching it say so.
    bool cluster_announced = false;

    /// Loop thread: drops the connection unless it is (being) made to
    /// `keep`, and ends the backoff of one that failed to reach another; it
    /// reconnects through the locator. A failover's new master.
    void drop_unless(const ServerAddress& keep, const std::string& why);

    /// Replicas a write here must reach (the WAIT after it): those the master
    /// reported connected (ROLE, in the handshake and every few seconds while
    /// Config::replica_sync is on); 0 when unknown (ROLE refused by an ACL).
    /// Under ReplicaSync::required, at least 1 once this connection has seen
    /// a replica, across reconnects and failovers, for as long as it lives:
    /// a master that lost its replicas (an old master cut off by a failover)
    /// must fail the WAIT, not be spared it. Any thread.
    int replicas() const {
        const int reported = replicas_.load(std::memory_order_relaxed);
        return reported == 0 && replicas_lost() ? 1 : reported;
    }
    /// Under ReplicaSync::required: the master reports no replica, though
    /// this connection saw one before (so replicas() still asks for 1).
    bool replicas_lost() const {
        return config_.replica_sync == ReplicaSync::required && seen_replicas_.load(std::memory_order_relaxed) &&
               replicas_.load(std::memory_order_relaxed) == 0;
    }
    /// A WAIT answered that more replicas acknowledged than ROLE reported.
    void saw_replicas(int count);

    /// The server lets this connection's user run every command on every key
    /// and channel (ACL GETUSER, once connected and every few seconds after;
    /// false from the first refusal by the ACL until asked again): scripts need
    /// not check its rights. False until known. Any thread.
    bool user_unrestricted() const { return user_unrestricted_.load(std::memory_order_relaxed); }

    /// io thread only.
    bool ready() const { return machine_.state() == State::ready; }
    const std::string& server() const { return server_; }
    const Config& config() const { return config_; }
    /// Where it is (or was last) connected: behind a sentinel, the master's address.
    std::string address() const { return locate ? machine_.address().name() : server_; }
    /// Where it was last ready ("host:port"; empty before) and what runs
    /// there ("Redis 7.0.15", "Valkey 8.0.1"; empty on a pub/sub connection,
    /// or if the probe was refused: an ACL without EVAL_RO). Any thread.
    std::pair<std::string, std::string> peer() const;

private:
    using State = SessionMachine::State;
    using Step = SessionMachine::Step;
    using Clock = std::chrono::steady_clock;
    struct Pending {
        std::string encoded;
        ReplyHandler handler;
        Clock::time_point since;
        std::chrono::milliseconds hold{0};  // submit()'s
        bool one_attempt = false;           // submit_one_attempt()
    };
    struct InFlight {
        ReplyHandler handler;
        Clock::time_point sent;
        Clock::time_point due;  // the reply later than this: a stalled server
        std::string encoded;    // Topology::sentinel only: sent again after a READONLY
    };

    /// Carries out the machine's actions in order; stops early if one of
    /// them fed the machine an event that ended this turn (a handler stopping
    /// the connection, a locator answering at once).
    void run(const SessionMachine::Actions& actions);
    void perform(const SessionMachine::Action& action);
    /// The machine's options: read at start(), as `locate` and `is_push` are set after construction.
    SessionMachine::Options session_options() const;
    void connect_to(const ServerAddress& address);
    void on_connected(std::uint64_t generation);
    void start_tls();
    /// The connection carries bytes: read, and send the Redis handshake.
    void start_session(std::uint8_t steps);
    void send_handshake(const std::vector<std::pair<Step, std::string>>& commands);
    /// Sends ACL GETUSER for the connection's user; on_rights reads the reply.
    void ask_rights();
    void on_rights(const Reply& reply);
    /// Counts the replicas the master reports (ROLE).
    void count_replicas(int count);
    /// Reads what runs at the server from the rights probe's reply (software_of).
    void on_server_info(const Reply& reply);
    /// The user the connection authenticates as ("default" without one).
    std::string acl_user() const;
    /// Closes the socket under both locks; the commands in flight move to dropped_.
    void close_socket();
    void fail_in_flight(errc code, bool established);
    void became_ready();
    void submit(Pending pending, std::string_view encoded);
    /// Appends to the output and the FIFO; true if the caller must drain().
    bool enqueue_locked(std::string_view encoded, ReplyHandler handler, Clock::time_point now,
                        std::chrono::milliseconds hold = std::chrono::milliseconds::zero());
    /// Sends the output; `epoch` is the connection's when the caller became
    /// the writer, so a writer delayed past a reconnect cannot touch the new one.
    void drain(std::uint64_t epoch);
    void flush_soon();
    void flush_after_read();
    void write_rest_async(std::string rest, std::uint64_t epoch);
    /// The connection failed since a writer of `epoch` took its turn: that writer stands down.
    bool stale(std::uint64_t epoch) const;
    /// A writer's send failed: fails the connection on the loop thread, unless it is stale by then.
    void writer_failed(std::string why, std::uint64_t epoch);
    void tls_handshake(std::string_view in, std::uint64_t generation);
    void read_more();
    void read_failed(const asio::error_code& ec);
    void on_bytes(std::size_t n);
    /// Hands a reply that is not a push to the oldest command in flight (or
    /// where route_answer() says); false if the connection failed instead.
    bool answer(Reply& reply);
    /// The connection failed for `why`: the machine closes it. `code`: what
    /// the commands in flight get; auth_refused, tls_failed and
    /// protocol_error fail the waiting commands too (retrying cannot help).
    void fail(const std::string& why, errc code = errc::connection_lost);
    void watch();
    void refresh_role(Clock::time_point now);
    void fail_waiting(const Failure& error, bool all);
    void fail_one_attempt(const std::string& why);
    Failure one_attempt_error(const std::string& why) const;
    /// Tells Config::on_event of this connection's loss or return.
    void tell(Event::Kind kind, const std::string& why) const;

    asio::io_context& io_;
    const Config config_;
    const std::string server_;
    asio::generic::stream_protocol::socket socket_;
    asio::ip::tcp::resolver resolver_;
    asio::steady_timer connect_timer_;  // the machine's connect timer
    asio::steady_timer retry_timer_;
    asio::steady_timer watch_timer_;
    // Null for plain TCP; set once, so any thread may test it.
    const std::shared_ptr<asio::ssl::context> tls_context_;

    // Held by the one thread writing to the socket, so fail() cannot close
    // (and the OS reuse) the descriptor under a send().
    std::mutex write_mutex_;
    std::string batch_;  // drain()'s, under write_mutex_: the bytes being sent
    // Guards everything below it.
    mutable std::mutex mutex_;
    State state_ = State::idle;     // the machine's, as submitters see it: set by the actions that change it
    int fd_ = -1;                   // the socket while handshaking or ready
    std::uint64_t epoch_ = 0;       // bumps with every fail(): writers of an older one stand down
    std::string output_;            // bytes not yet handed to a writer
    bool writer_active_ = false;
    bool flush_posted_ = false;     // flush_soon() will send what is queued
    std::deque<InFlight> in_flight_;
    std::deque<InFlight> dropped_;  // io thread: close's, until fail_in_flight
    std::deque<Pending> waiting_;   // submitted while not ready
    Clock::time_point held_until_{};  // a WAIT in flight keeps the server from answering until then
    std::string last_error_;
    // The last attempt's refusal that retrying cannot fix (auth_refused,
    // tls_failed, protocol_error); set, commands fail at once with it until ready.
    Failure refused_;
    std::string peer_;      // address() when last ready
    std::string software_;  // software_of() the last rights probe's answer
    // TLS, new for each connection (set by the loop thread); a writer takes
    // its own reference with the fd, so a reconnect never frees one under it.
    std::shared_ptr<TlsSession> tls_;

    // io thread only.
    // Its generation bumps with each attempt and each failure: stale callbacks check it.
    SessionMachine machine_;

    std::vector<char> read_buffer_;
    ReaderMachine reader_;
    std::uint64_t reads_ = 0;       // on_bytes() calls
    std::uint64_t reads_seen_ = 0;  // reads_ at watch()'s last tick
    Clock::time_point heard_{};     // the tick that last saw reads_ move: the server's last sign of life
    Clock::time_point role_checked_{};    // last ROLE sent
    std::atomic<int> replicas_{0};        // as the master last reported them
    std::atomic<bool> seen_replicas_{false};  // ever more than 0 (replicas())
    std::atomic<bool> user_unrestricted_{false};
    bool may_ask_rights_ = false;  // io thread: the user may run ACL GETUSER
};

}  // namespace holdfast::detail
