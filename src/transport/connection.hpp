// One connection to one Redis server: pipelined commands, reconnect with backoff.
#pragma once

#include <asio.hpp>
#include <asio/generic/stream_protocol.hpp>

#include <chrono>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "holdfast/config.hpp"
#include "transport/reply.hpp"

namespace holdfast::detail {

/// Completion of one command: either a transport failure (error set) or a
/// reply, which may itself be a server error reply.
using ReplyHandler = std::function<void(std::exception_ptr error, Reply reply)>;

/// A connection pipelines: every command submitted is appended to one write
/// buffer and its handler to a FIFO; replies complete handlers in order.
///
/// Thread safety: submit() may be called from any thread; everything else runs
/// on the io_context's thread, including every handler.
///
/// Faults: commands in flight when the connection drops fail with
/// ConnectionError (they may or may not have run). Commands submitted while
/// disconnected wait for the reconnect up to Config::timeout, then fail naming
/// the server. A command without a reply within Config::timeout closes the
/// connection (a stalled server), which fails the commands behind it too.
class Connection : public std::enable_shared_from_this<Connection> {
public:
    Connection(asio::io_context& io, const Config& config);
    ~Connection();

    /// Starts connecting; reconnects after every drop until stop().
    void start();
    void stop();

    /// Queues RESP bytes; `handler` (may be empty for pub/sub commands) runs on
    /// the io thread with the reply.
    void submit(std::string encoded, ReplyHandler handler);

    /// Subscriber mode: replies with no pending handler (pub/sub pushes) go here.
    std::function<void(Reply)> on_push;
    /// Runs on the io thread each time the connection is (re)established and
    /// authenticated, before queued commands are written.
    std::function<void()> on_ready;

    bool ready() const { return state_ == State::ready; }
    const std::string& server() const { return server_; }

private:
    enum class State { idle, connecting, handshake, ready, backoff, stopped };
    struct Pending {
        std::string encoded;
        ReplyHandler handler;
        std::chrono::steady_clock::time_point since;
    };
    struct InFlight {
        ReplyHandler handler;
        std::chrono::steady_clock::time_point sent;
    };

    void connect();
    void on_connected();
    void send_handshake();
    void flush();
    void write_more();
    void read_more();
    void on_bytes(std::size_t n);
    void fail(const std::string& why, bool auth_refused = false);
    void schedule_reconnect();
    void arm_pending_timer();
    void expire_pending();
    void arm_reply_timer();
    void fail_pending(const std::exception_ptr& error);

    asio::io_context& io_;
    Config config_;
    std::string server_;
    asio::generic::stream_protocol::socket socket_;
    asio::ip::tcp::resolver resolver_;
    asio::steady_timer connect_timer_;
    asio::steady_timer retry_timer_;
    asio::steady_timer pending_timer_;
    asio::steady_timer reply_timer_;
    bool reply_timer_armed_ = false;
    bool pending_timer_armed_ = false;

    // Shared with submitting threads.
    std::mutex mutex_;
    std::vector<Pending> submitted_;
    bool flush_posted_ = false;

    // io thread only.
    State state_ = State::idle;
    std::uint64_t generation_ = 0;  // bumps on each new socket; stale callbacks check it
    std::deque<Pending> waiting_;   // submitted while not ready
    std::deque<InFlight> in_flight_;
    std::string write_buffer_;      // being written
    std::string next_buffer_;       // accumulating behind it
    bool writing_ = false;
    std::vector<char> read_buffer_;
    ReplyReader reader_;
    std::chrono::milliseconds backoff_;
    std::string last_error_;
    int handshake_replies_ = 0;
};

}  // namespace holdfast::detail
