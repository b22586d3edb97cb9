#include "transport/connection.hpp"

#include "holdfast/errors.hpp"
#include "transport/command.hpp"

namespace holdfast::detail {

using Clock = std::chrono::steady_clock;

namespace {
constexpr std::size_t read_chunk = 64 * 1024;

std::exception_ptr connection_error(const std::string& message, bool auth) {
    if (auth) return std::make_exception_ptr(AuthError(message));
    return std::make_exception_ptr(ConnectionError(message));
}
}  // namespace

Connection::Connection(asio::io_context& io, const Config& config)
    : io_(io),
      config_(config),
      server_(config.server_name()),
      socket_(io),
      resolver_(io),
      connect_timer_(io),
      retry_timer_(io),
      pending_timer_(io),
      reply_timer_(io),
      read_buffer_(read_chunk),
      backoff_(config.retry_interval) {}

Connection::~Connection() = default;

void Connection::start() {
    asio::post(io_, [self = shared_from_this()] { self->connect(); });
}

void Connection::stop() {
    asio::post(io_, [self = shared_from_this()] {
        if (self->state_ == State::stopped) return;
        self->fail("the client is shutting down");
        self->state_ = State::stopped;
        self->retry_timer_.cancel();
        self->fail_pending(
            connection_error("holdfast: client for " + self->server_ + " was closed before the command ran", false));
    });
}

void Connection::submit(std::string encoded, ReplyHandler handler) {
    bool post;
    {
        std::lock_guard lock(mutex_);
        submitted_.push_back({std::move(encoded), std::move(handler), Clock::now()});
        post = !flush_posted_;
        flush_posted_ = true;
    }
    if (post) asio::post(io_, [self = shared_from_this()] { self->flush(); });
}

void Connection::connect() {
    if (state_ == State::stopped) return;
    state_ = State::connecting;
    const auto generation = ++generation_;
    auto self = shared_from_this();
    connect_timer_.expires_after(config_.connect_timeout);
    connect_timer_.async_wait([self, generation](asio::error_code ec) {
        if (ec || generation != self->generation_ || self->state_ != State::connecting) return;
        self->fail("connect timed out after " + std::to_string(self->config_.connect_timeout.count()) + " ms");
    });
    auto on_connect = [self, generation](asio::error_code ec) {
        if (generation != self->generation_ || self->state_ != State::connecting) return;
        if (ec) return self->fail("cannot connect: " + ec.message());
        self->connect_timer_.cancel();
        self->on_connected();
    };
    if (!config_.unix_socket.empty()) {
        socket_.async_connect(asio::local::stream_protocol::endpoint(config_.unix_socket), on_connect);
        return;
    }
    resolver_.async_resolve(
        config_.host, std::to_string(config_.port),
        [self, generation, on_connect](asio::error_code ec, asio::ip::tcp::resolver::results_type results) {
            if (generation != self->generation_ || self->state_ != State::connecting) return;
            if (ec || results.empty()) return self->fail("cannot resolve host: " + ec.message());
            self->socket_.async_connect(asio::generic::stream_protocol::endpoint(results.begin()->endpoint()),
                                        on_connect);
        });
}

void Connection::on_connected() {
    if (config_.unix_socket.empty()) {
        asio::error_code ignored;
        socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
    }
    reader_.reset();
    state_ = State::handshake;
    read_more();
    send_handshake();
}

// AUTH and SELECT when configured, and always a PING: the handshake proves the
// peer speaks RESP before any command is trusted to it.
void Connection::send_handshake() {
    std::vector<std::string> commands;
    if (!config_.password.empty()) {
        commands.push_back(config_.username.empty()
                               ? encode_command({"AUTH", config_.password})
                               : encode_command({"AUTH", config_.username, config_.password}));
    }
    if (config_.database != 0) commands.push_back(encode_command({"SELECT", std::to_string(config_.database)}));
    commands.push_back(encode_command({"PING"}));
    handshake_replies_ = static_cast<int>(commands.size());
    const auto generation = generation_;
    for (std::size_t i = 0; i < commands.size(); ++i) {
        const bool is_auth = i == 0 && !config_.password.empty();
        auto self = shared_from_this();
        in_flight_.push_back({[self, generation, is_auth](std::exception_ptr error, Reply reply) {
                                  if (error || generation != self->generation_) return;
                                  if (reply.is_error()) {
                                      if (is_auth)
                                          return self->fail("AUTH refused (" + reply.str +
                                                                "); check the user name and password in the URL",
                                                            true);
                                      return self->fail("handshake refused: " + reply.str);
                                  }
                                  if (--self->handshake_replies_ > 0) return;
                                  self->state_ = State::ready;
                                  self->backoff_ = self->config_.retry_interval;
                                  self->last_error_.clear();
                                  if (self->on_ready) self->on_ready();
                                  self->flush();
                              },
                              Clock::now()});
        next_buffer_ += commands[i];
    }
    arm_reply_timer();
    write_more();
}

void Connection::flush() {
    std::vector<Pending> batch;
    {
        std::lock_guard lock(mutex_);
        batch.swap(submitted_);
        flush_posted_ = false;
    }
    if (state_ == State::stopped) {
        for (auto& p : batch)
            if (p.handler)
                p.handler(connection_error("holdfast: client for " + server_ + " is closed", false), Reply{});
        return;
    }
    for (auto& p : batch) waiting_.push_back(std::move(p));
    if (state_ != State::ready) {
        arm_pending_timer();
        return;
    }
    const auto now = Clock::now();
    const bool was_idle = in_flight_.empty();
    for (auto& p : waiting_) {
        next_buffer_ += p.encoded;
        if (p.handler) in_flight_.push_back({std::move(p.handler), now});
    }
    waiting_.clear();
    if (was_idle) arm_reply_timer();
    write_more();
}

void Connection::write_more() {
    if (writing_ || next_buffer_.empty()) return;
    writing_ = true;
    write_buffer_.swap(next_buffer_);
    next_buffer_.clear();
    const auto generation = generation_;
    asio::async_write(socket_, asio::buffer(write_buffer_),
                      [self = shared_from_this(), generation](asio::error_code ec, std::size_t) {
                          if (generation != self->generation_) return;
                          self->writing_ = false;
                          if (ec) return self->fail("write failed: " + ec.message());
                          self->write_buffer_.clear();
                          self->write_more();
                      });
}

void Connection::read_more() {
    const auto generation = generation_;
    socket_.async_read_some(asio::buffer(read_buffer_),
                            [self = shared_from_this(), generation](asio::error_code ec, std::size_t n) {
                                if (generation != self->generation_) return;
                                if (ec) return self->fail(ec == asio::error::eof ? "the server closed the connection"
                                                                                 : "read failed: " + ec.message());
                                self->on_bytes(n);
                            });
}

void Connection::on_bytes(std::size_t n) {
    const auto generation = generation_;
    try {
        reader_.feed(read_buffer_.data(), n);
        while (auto reply = reader_.next()) {
            if (!in_flight_.empty()) {
                auto handler = std::move(in_flight_.front().handler);
                in_flight_.pop_front();
                handler(nullptr, std::move(*reply));
            } else if (on_push) {
                on_push(std::move(*reply));
            } else {
                return fail("the server sent a reply nobody asked for: " + reply->describe());
            }
            // A handler may have failed or stopped the connection.
            if (generation != generation_ || state_ == State::stopped) return;
        }
    } catch (const std::runtime_error& e) {
        return fail(std::string(e.what()) + " (is this a Redis server?)");
    }
    read_more();
}

// Closes the socket, fails what was in flight, and schedules a reconnect.
void Connection::fail(const std::string& why, bool auth_refused) {
    if (state_ == State::stopped || state_ == State::backoff || state_ == State::idle) {
        if (state_ != State::stopped) last_error_ = why;
        return;
    }
    ++generation_;
    last_error_ = why;
    asio::error_code ignored;
    socket_.close(ignored);
    resolver_.cancel();
    connect_timer_.cancel();
    writing_ = false;
    write_buffer_.clear();
    next_buffer_.clear();
    const bool was_established = state_ == State::ready || state_ == State::handshake;
    auto in_flight = std::move(in_flight_);
    in_flight_.clear();
    state_ = State::backoff;
    auto error = connection_error("holdfast: connection to " + server_ + " lost (" + why + ")" +
                                      (was_established ? "; the command may or may not have run" : ""),
                                  auth_refused);
    for (auto& f : in_flight)
        if (f.handler) f.handler(error, Reply{});
    if (auth_refused)
        fail_pending(connection_error("holdfast: " + server_ + ": " + why, true));
    schedule_reconnect();
}

void Connection::schedule_reconnect() {
    if (state_ == State::stopped) return;
    retry_timer_.expires_after(backoff_);
    backoff_ = std::min(backoff_ * 2, config_.retry_interval_max);
    retry_timer_.async_wait([self = shared_from_this()](asio::error_code ec) {
        if (ec || self->state_ != State::backoff) return;
        self->connect();
    });
    arm_pending_timer();
}

void Connection::arm_pending_timer() {
    if (pending_timer_armed_ || waiting_.empty()) return;
    pending_timer_armed_ = true;
    pending_timer_.expires_at(waiting_.front().since + config_.timeout);
    pending_timer_.async_wait([self = shared_from_this()](asio::error_code) {
        self->pending_timer_armed_ = false;
        self->expire_pending();
    });
}

void Connection::expire_pending() {
    if (state_ == State::ready) return;  // flushed meanwhile
    const auto now = Clock::now();
    while (!waiting_.empty() && waiting_.front().since + config_.timeout <= now) {
        auto p = std::move(waiting_.front());
        waiting_.pop_front();
        std::string reason = last_error_.empty() ? "still connecting" : last_error_;
        if (p.handler)
            p.handler(connection_error("holdfast: no connection to " + server_ + " within " +
                                           std::to_string(config_.timeout.count()) + " ms (" + reason +
                                           "); is the server running and reachable?",
                                       false),
                      Reply{});
    }
    arm_pending_timer();
}

void Connection::fail_pending(const std::exception_ptr& error) {
    auto waiting = std::move(waiting_);
    waiting_.clear();
    for (auto& p : waiting)
        if (p.handler) p.handler(error, Reply{});
}

// One timer watches the oldest command in flight; it is re-armed only when it
// fires, not per reply, so a busy pipeline pays nothing for it.
void Connection::arm_reply_timer() {
    if (reply_timer_armed_ || in_flight_.empty()) return;
    reply_timer_armed_ = true;
    reply_timer_.expires_at(in_flight_.front().sent + config_.timeout);
    reply_timer_.async_wait([self = shared_from_this()](asio::error_code) {
        self->reply_timer_armed_ = false;
        if (self->in_flight_.empty() || self->state_ == State::stopped) return;
        if (self->in_flight_.front().sent + self->config_.timeout <= Clock::now())
            return self->fail("no reply within " + std::to_string(self->config_.timeout.count()) + " ms");
        self->arm_reply_timer();
    });
}

}  // namespace holdfast::detail
