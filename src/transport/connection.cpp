#include "transport/connection.hpp"

#include <fcntl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>

#include "config/nat_map.hpp"
#include "holdfast/errors.hpp"
#include "transport/command.hpp"

namespace holdfast::detail {
namespace {

constexpr std::size_t read_chunk = 64 * 1024;

// A command the client closing kept from being sent.
Failure not_sent(const std::string& server) { return client_closed("; the command for " + server + " was not sent"); }

}  // namespace

Connection::Connection(asio::io_context& io, const Config& config)
    : io_(io),
      config_(config),
      server_(config.server_name()),
      socket_(io),
      resolver_(io),
      connect_timer_(io),
      retry_timer_(io),
      watch_timer_(io),
      tls_context_(config.tls.enabled ? make_tls_context(config) : nullptr),
      read_buffer_(read_chunk) {}

Connection::~Connection() = default;

void Connection::start() {
    asio::post(io_, [self = shared_from_this()] {
        if (self->machine_.state() != State::idle) return;  // stopped first
        self->machine_ = SessionMachine(self->session_options());
        self->run(self->machine_.start());
        self->watch();
    });
}

SessionMachine::Options Connection::session_options() const {
    SessionMachine::Options o;
    o.locates = locate && config_.unix_socket.empty();
    o.cluster_announced = cluster_announced;
    o.requires_master = config_.topology == Topology::sentinel;
    o.tls = tls_context_ != nullptr;
    o.auth = !config_.password.empty();
    o.select = config_.database != 0;
    // So CLIENT LIST shows whose connection this is.
    o.setname = config_.client_name && !config_.client_name->empty();
    // Whether the user may run everything, so scripts need not check its
    // rights (Transport::eval). Not on a subscriber.
    o.probes_rights = !is_push;
    // Behind a sentinel or with replica sync on: is it the master, with how many replicas.
    o.asks_role = config_.topology == Topology::sentinel || config_.replica_sync != ReplicaSync::off;
    // A connection for commands tells the first time it is ready (Event::Kind::connected).
    o.tells_connected = !is_push;
    if (config_.unix_socket.empty()) o.address = {config_.host, config_.port};
    o.connect_timeout = config_.connect_timeout;
    o.retry_interval = config_.retry_interval;
    o.retry_interval_max = config_.retry_interval_max;
    return o;
}

void Connection::stop_now() {
    // What was submitted on the way out (a fair waiter leaving its queue) but
    // queued behind replies still due goes now, as far as the socket takes
    // it without blocking: the close below would drop it.
    flush_after_read();
    const auto actions = machine_.stop();
    {
        // Before anything fails: a command submitted from now on fails at once.
        std::lock_guard lock(mutex_);
        state_ = machine_.state();
    }
    run(actions);
    watch_timer_.cancel();
}

void Connection::run(const SessionMachine::Actions& actions) {
    const auto generation = machine_.generation();
    const auto state = machine_.state();
    for (const auto& action : actions) {
        if (machine_.generation() != generation || machine_.state() != state) return;
        perform(action);
    }
}

void Connection::perform(const SessionMachine::Action& action) {
    using Kind = SessionMachine::Action::Kind;
    switch (action.kind) {
        case Kind::locate: {
            {
                std::lock_guard lock(mutex_);
                state_ = State::locating;
            }
            // The locator bounds its own time (a connect timeout per sentinel).
            return locate([self = shared_from_this(), generation = machine_.generation()](Failure error,
                                                                                           ServerAddress address) {
                if (!error) return self->run(self->machine_.located(generation, std::move(address)));
                // The locator's refusal (every sentinel refused AUTH, or TLS) is permanent too.
                const errc code = error.is(errc::auth_refused) ? errc::auth_refused
                                  : error.is(errc::tls_failed) ? errc::tls_failed
                                                               : errc::not_connected;
                std::string why = error.message();
                if (why.rfind("holdfast: ", 0) == 0) why.erase(0, 10);
                self->run(self->machine_.locate_failed(generation, code, std::move(why)));
            });
        }
        case Kind::connect: return connect_to(machine_.address());
        case Kind::arm_connect_timer:
            connect_timer_.expires_after(config_.connect_timeout);
            return connect_timer_.async_wait([self = shared_from_this(), generation = machine_.generation()](
                                                 asio::error_code ec) {
                if (!ec) self->run(self->machine_.connect_timer_fired(generation));
            });
        case Kind::cancel_connect_timer: connect_timer_.cancel(); return;
        case Kind::start_tls: return start_tls();
        case Kind::send_handshake: return start_session(action.steps);
        case Kind::send_rights:
            may_ask_rights_ = true;
            return send_handshake({{Step::rights, encode_command({"ACL", "GETUSER", acl_user()})}});
        case Kind::replicas: return count_replicas(action.count);
        case Kind::tell_connected: return tell(Event::Kind::connected, peer().second);
        case Kind::tell_restored: return tell(Event::Kind::connection_restored, peer().second);
        case Kind::become_ready: return became_ready();
        case Kind::close: return close_socket();
        case Kind::tell_lost: return tell(Event::Kind::connection_lost, machine_.why());
        case Kind::fail_in_flight: return fail_in_flight(action.code, action.established);
        case Kind::fail_waiting: {
            if (action.code == errc::client_closed) return fail_waiting(not_sent(server_), true);
            const Failure refused(action.code, "holdfast: " + server_ + ": " + machine_.why());
            {
                // Retrying cannot help (credentials, a certificate): commands
                // submitted from now on fail at once too, until a reconnect succeeds.
                std::lock_guard lock(mutex_);
                refused_ = refused;
            }
            return fail_waiting(refused, true);
        }
        case Kind::fail_one_attempt: return fail_one_attempt(machine_.why());
        case Kind::arm_backoff:
            retry_timer_.expires_after(action.delay);
            return retry_timer_.async_wait([self = shared_from_this()](asio::error_code ec) {
                if (!ec) self->run(self->machine_.retry_timer_fired());
            });
        case Kind::cancel_backoff: retry_timer_.cancel(); return;
    }
}

void Connection::submit(std::string_view encoded, ReplyHandler handler, std::chrono::milliseconds hold) {
    submit(Pending{{}, std::move(handler), Clock::now(), hold, false}, encoded);
}

void Connection::submit_one_attempt(std::string_view encoded, ReplyHandler handler) {
    submit(Pending{{}, std::move(handler), Clock::now(), std::chrono::milliseconds::zero(), true}, encoded);
}

void Connection::submit(Pending pending, std::string_view encoded) {
    std::uint64_t epoch = 0;
    std::string failed;  // a one-attempt command, and the last attempt failed
    {
        std::lock_guard lock(mutex_);
        if (state_ != State::ready) {
            if (state_ == State::stopped || refused_) {
                const Failure error = state_ == State::stopped ? not_sent(server_) : refused_;
                if (pending.handler)
                    asio::post(io_, [handler = std::move(pending.handler), error] { handler(error, Reply{}); });
                return;
            }
            if (!pending.one_attempt || state_ != State::backoff) {
                pending.encoded = encoded;
                waiting_.push_back(std::move(pending));
                return;
            }
            failed = last_error_;
        } else {
            if (!enqueue_locked(encoded, std::move(pending.handler), pending.since, pending.hold)) return;
            epoch = epoch_;
        }
    }
    if (!failed.empty()) {
        if (pending.handler)
            asio::post(io_, [handler = std::move(pending.handler), error = one_attempt_error(failed)] {
                handler(error, Reply{});
            });
        return;
    }
    drain(epoch);
}

void Connection::submit_asking(std::string_view encoded, ReplyHandler handler) {
    static const std::string asking = encode_command({"ASKING"});
    ReplyHandler ignore = [](Failure, Reply) {};  // the command's own reply tells
    const auto now = Clock::now();
    std::uint64_t epoch = 0;
    bool stopped = false;
    {
        std::lock_guard lock(mutex_);
        if (state_ == State::stopped || (state_ != State::ready && refused_)) {
            stopped = true;
        } else if (state_ != State::ready) {
            waiting_.push_back({asking, std::move(ignore), now});
            waiting_.push_back({std::string(encoded), std::move(handler), now});
            return;
        } else {
            const bool must_drain = enqueue_locked(asking, std::move(ignore), now);
            enqueue_locked(encoded, std::move(handler), now);
            if (!must_drain) return;
            epoch = epoch_;
        }
    }
    if (stopped) return submit(encoded, std::move(handler));  // fails it, as submit() does (or refused)
    drain(epoch);
}

bool Connection::enqueue_locked(std::string_view encoded, ReplyHandler handler, Clock::time_point now,
                                std::chrono::milliseconds hold) {
    const bool awaiting_replies = !in_flight_.empty();
    output_ += encoded;
    // Behind a WAIT the server answers nothing until the WAIT returns: the
    // reply timeout counts from then, for the WAIT as for the commands behind it.
    const Clock::time_point answers_from = std::max(now, held_until_);
    if (hold > std::chrono::milliseconds::zero()) held_until_ = answers_from + hold;
    // Behind a sentinel a READONLY reply sends the command again: keep it.
    if (handler)
        in_flight_.push_back({std::move(handler), now, answers_from + hold + config_.timeout,
                              config_.topology == Topology::sentinel ? std::string(encoded) : std::string()});
    if (writer_active_) return false;  // the active writer sends these too
    // Replies are due, so the loop will wake to read them and then send
    // everything queued by then in one batch (flush_after_read); or it has
    // just read them and is about to (flush_posted_).
    if (awaiting_replies || flush_posted_) return false;
    writer_active_ = true;
    return true;
}

// Posted rather than run at once: it runs after the other replies the loop
// has already read (other connections', in a cluster), so the callers those
// replies woke have queued their next commands by then and go in the same
// batch, instead of each sending its own (a syscall for the client and the
// server per command).
void Connection::flush_soon() {
    {
        std::lock_guard lock(mutex_);
        if (flush_posted_ || writer_active_) return;
        flush_posted_ = true;
    }
    asio::post(io_, [self = shared_from_this(), generation = machine_.generation()] {
        if (generation != self->machine_.generation()) return;  // fail() cleared the flag
        {
            std::lock_guard lock(self->mutex_);
            self->flush_posted_ = false;
        }
        self->flush_after_read();
    });
}

void Connection::flush_after_read() {
    std::uint64_t epoch;
    {
        std::lock_guard lock(mutex_);
        if (writer_active_ || (output_.empty() && !(tls_ && tls_->has_output()))) return;
        writer_active_ = true;
        epoch = epoch_;
    }
    drain(epoch);
}

// What drain() keeps of a batch's capacity for the next one: enough for a
// busy client's bursts, without holding on to a flood's. Not less: freeing a
// block of 64 KiB or more makes glibc consolidate its free lists, each time.
constexpr std::size_t kept_buffer_capacity = 1024 * 1024;

// Sends until the output is empty, from whichever thread became the writer.
void Connection::drain(std::uint64_t epoch) {
    std::lock_guard writing(write_mutex_);
    // A member, so both buffers keep their capacity: appending a command
    // then allocates nothing.
    std::string& batch = batch_;
    for (;;) {
        int fd;
        std::shared_ptr<TlsSession> tls;
        {
            std::lock_guard lock(mutex_);
            if (epoch != epoch_) return;  // fail() ended this writer's turn
            if ((output_.empty() && !(tls_ && tls_->has_output())) || fd_ < 0) {
                writer_active_ = false;
                return;
            }
            batch.clear();  // what an early return below left
            batch.swap(output_);
            fd = fd_;
            tls = tls_;
        }
        if (tls) {
            std::string ciphertext;
            asio::error_code ec;
            tls->encrypt(batch, ciphertext, ec);
            if (ec) return writer_failed("TLS write failed: " + ec.message(), epoch);
            batch.swap(ciphertext);
        }
        std::size_t sent = 0;
        while (sent < batch.size()) {
            const ssize_t n = ::send(fd, batch.data() + sent, batch.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                sent += static_cast<std::size_t>(n);
            } else if (n < 0 && errno == EINTR) {
                continue;
            } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                // Socket buffer full: the loop finishes this batch and keeps draining.
                asio::post(io_, [self = shared_from_this(), rest = batch.substr(sent), epoch]() mutable {
                    self->write_rest_async(std::move(rest), epoch);
                });
                return;
            } else {
                // fail() resets writer_active_.
                return writer_failed(std::string("write failed: ") + std::strerror(n < 0 ? errno : EPIPE), epoch);
            }
        }
        batch.clear();
        // A flood (a million waiters' first attempts) leaves megabytes of
        // capacity behind, in both buffers as they swap: let it go.
        if (batch.capacity() > kept_buffer_capacity) std::string().swap(batch);
    }
}

// `epoch` is the writer's: if the connection failed since, the rest is void.
void Connection::write_rest_async(std::string rest, std::uint64_t epoch) {
    if (stale(epoch)) return;
    auto buffer = std::make_shared<std::string>(std::move(rest));
    asio::async_write(socket_, asio::buffer(*buffer),
                      [self = shared_from_this(), buffer, epoch](asio::error_code ec, std::size_t) {
                          if (self->stale(epoch)) return;
                          if (ec) return self->fail("write failed: " + ec.message());
                          self->drain(epoch);
                      });
}

bool Connection::stale(std::uint64_t epoch) const {
    std::lock_guard lock(mutex_);
    return epoch != epoch_;
}

void Connection::writer_failed(std::string why, std::uint64_t epoch) {
    asio::post(io_, [self = shared_from_this(), why = std::move(why), epoch] {
        if (!self->stale(epoch)) self->fail(why);  // stale: it already failed for its own reason
    });
}

void Connection::connect_to(const ServerAddress& address) {
    {
        std::lock_guard lock(mutex_);
        state_ = State::connecting;
    }
    auto self = shared_from_this();
    const auto generation = machine_.generation();
    // Config::nat_map: the address is reached elsewhere; errors say where.
    const ServerAddress target = nat_mapped(config_.nat_map, address);
    const std::string via = target == address ? "" : " (at " + target.name() + ", Config::nat_map)";
    auto on_connect = [self, generation, via](asio::error_code ec) {
        if (ec) return self->run(self->machine_.connect_failed(generation, "cannot connect: " + ec.message() + via));
        self->on_connected(generation);
    };
    if (!config_.unix_socket.empty()) {
        socket_.async_connect(asio::local::stream_protocol::endpoint(config_.unix_socket), on_connect);
        return;
    }
    resolver_.async_resolve(
        target.host, std::to_string(target.port),
        [self, generation, on_connect, via](asio::error_code ec, asio::ip::tcp::resolver::results_type results) {
            if (ec || results.empty())
                return self->run(
                    self->machine_.connect_failed(generation, "cannot resolve host: " + ec.message() + via));
            if (!self->machine_.current(generation, State::connecting)) return;
            self->socket_.async_connect(asio::generic::stream_protocol::endpoint(results.begin()->endpoint()),
                                        on_connect);
        });
}

void Connection::on_connected(std::uint64_t generation) {
    if (!machine_.current(generation, State::connecting)) return;
    asio::error_code ignored;
    if (config_.unix_socket.empty()) socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
    socket_.non_blocking(true, ignored);
    // Children the application starts must not inherit its Redis connections.
    ::fcntl(socket_.native_handle(), F_SETFD, FD_CLOEXEC);
    run(machine_.connected(generation));
}

void Connection::start_tls() {
    {
        std::lock_guard lock(mutex_);
        state_ = State::tls;
        tls_ = std::make_shared<TlsSession>(*tls_context_, config_, machine_.address().host);
    }
    tls_handshake({}, machine_.generation());
}

// One round of the TLS handshake: feed what the server sent, send what
// OpenSSL answers, then read more or start the Redis session.
void Connection::tls_handshake(std::string_view in, std::uint64_t generation) {
    auto out = std::make_shared<std::string>();
    asio::error_code ec;
    const bool done = tls_->handshake(in, *out, ec);
    auto next = [self = shared_from_this(), generation, done](asio::error_code write_ec, std::size_t) {
        auto& machine = self->machine_;
        if (write_ec)
            return self->run(
                machine.tls_failed(generation, "TLS handshake failed: " + write_ec.message(), errc::connection_lost));
        if (done) return self->run(machine.tls_done(generation));
        if (!machine.current(generation, State::tls)) return;
        self->socket_.async_read_some(asio::buffer(self->read_buffer_), [self, generation](asio::error_code read_ec,
                                                                                          std::size_t n) {
            if (!self->machine_.current(generation, State::tls)) return;
            if (read_ec)
                return self->run(self->machine_.tls_failed(
                    generation, "TLS handshake failed: " + read_ec.message(), errc::connection_lost));
            self->tls_handshake(std::string_view(self->read_buffer_.data(), n), generation);
        });
    };
    if (ec) {
        if (is_tls_error(ec))
            return run(machine_.tls_failed(
                generation, describe_tls_failure(ec, tls_->native_handle(), config_, machine_.address().host),
                errc::tls_failed));
        return run(machine_.tls_failed(generation, "TLS handshake failed: " + ec.message(), errc::connection_lost));
    }
    if (out->empty()) return next({}, 0);
    asio::async_write(socket_, asio::buffer(*out), [out, next](asio::error_code write_ec, std::size_t n) {
        next(write_ec, n);
    });
}

void Connection::start_session(std::uint8_t steps) {
    reader_.reset();
    {
        std::lock_guard lock(mutex_);
        state_ = State::handshake;
        fd_ = socket_.native_handle();
    }
    read_more();
    role_checked_ = Clock::now();
    const auto has = [steps](Step step) { return (steps & static_cast<std::uint8_t>(step)) != 0; };
    std::vector<std::pair<Step, std::string>> commands;
    if (has(Step::auth))
        commands.emplace_back(Step::auth, config_.username.empty()
                                              ? encode_command({"AUTH", config_.password})
                                              : encode_command({"AUTH", config_.username, config_.password}));
    if (has(Step::select))
        commands.emplace_back(Step::select, encode_command({"SELECT", std::to_string(config_.database)}));
    if (has(Step::setname))
        commands.emplace_back(Step::setname, encode_command({"CLIENT", "SETNAME", *config_.client_name}));
    commands.emplace_back(Step::ping, encode_command({"PING"}));
    // First whether the user may ask for its rights (a refused ACL GETUSER
    // would fill the operator's ACL LOG; a script's check logs nothing;
    // EVAL_RO, as it writes nothing, and so that it is not counted with the
    // primitives' script calls); the answer asks, and the connection is ready
    // once told, so every script call it carries uses the same choice from its first.
    // It also says what runs there (software_of), which INFO would say only
    // to a user granted it (and log a refusal in ACL LOG for every other).
    static const std::string probe =
        "return {redis.acl_check_cmd('acl', 'getuser', ARGV[1]) and 1 or 0, "
        "redis.SERVER_NAME or 'redis', redis.VALKEY_VERSION or redis.REDIS_VERSION}";
    if (has(Step::rights_probe))
        commands.emplace_back(Step::rights_probe, encode_command({"EVAL_RO", probe, "0", acl_user()}));
    if (has(Step::role)) commands.emplace_back(Step::role, encode_command({"ROLE"}));
    send_handshake(commands);
}

// In one batch. Each reply goes to the machine; a transport failure says
// nothing: the machine hears of it from whoever failed the connection.
void Connection::send_handshake(const std::vector<std::pair<Step, std::string>>& commands) {
    bool must_drain = false;
    std::uint64_t epoch;
    {
        std::lock_guard lock(mutex_);
        for (const auto& [step, encoded] : commands) {
            auto handler = [self = shared_from_this(), generation = machine_.generation(), step](Failure error,
                                                                                                  Reply reply) {
                if (error) return;
                if (step == Step::rights && generation == self->machine_.generation()) self->on_rights(reply);
                if (step == Step::rights_probe && generation == self->machine_.generation())
                    self->on_server_info(reply);
                self->run(self->machine_.replied(generation, step, reply));
            };
            must_drain |= enqueue_locked(encoded, std::move(handler), Clock::now());
        }
        epoch = epoch_;
    }
    if (must_drain) drain(epoch);
}

// Commands that waited for the connection go out first, in submission order.
void Connection::became_ready() {
    if (on_ready) on_ready();
    bool must_drain = false;
    std::uint64_t epoch;
    {
        std::lock_guard lock(mutex_);
        state_ = State::ready;
        last_error_.clear();
        refused_ = nullptr;
        peer_ = address();
        for (auto& p : waiting_) must_drain |= enqueue_locked(p.encoded, std::move(p.handler), Clock::now(), p.hold);
        waiting_.clear();
        epoch = epoch_;
    }
    if (must_drain) drain(epoch);
}

void Connection::read_more() {
    socket_.async_read_some(asio::buffer(read_buffer_), [self = shared_from_this(), generation = machine_.generation()](
                                                            asio::error_code ec, std::size_t n) {
        if (generation != self->machine_.generation()) return;
        if (!ec) return self->on_bytes(n);
        self->read_failed(ec);
    });
}

void Connection::read_failed(const asio::error_code& ec) {
    const bool tls = tls_ != nullptr;
    const bool closed = ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
    const bool reset = ec == asio::error::connection_reset;
    std::string why = closed  ? "the server closed the connection"
                      : reset ? "the server closed the connection (" + ec.message() + ")"
                              : "read failed: " + ec.message();
    // Refused before the first reply: a TLS alert (a client certificate
    // missing or refused) cannot be fixed by retrying; a plain client hung up
    // on may be at a TLS port.
    if (machine_.state() == State::handshake) {
        if (tls && is_tls_error(ec))
            return fail(describe_tls_failure(ec, tls_->native_handle(), config_, machine_.address().host),
                        errc::tls_failed);
        if (closed || reset)
            why += tls ? " during the handshake; if it requires a client certificate, give TlsConfig::cert_file and "
                         "key_file (--tls-cert, --tls-key)"
                       : " before answering the handshake; if it requires TLS, use rediss://";
    }
    fail(why);
}

void Connection::on_bytes(std::size_t n) {
    ++reads_;
    const auto generation = machine_.generation();
    std::string_view bytes(read_buffer_.data(), n);
    std::string plain;
    asio::error_code tls_ec;  // after the replies decrypted before it: a server may answer, then hang up
    if (tls_) {
        tls_->decrypt(bytes, plain, tls_ec);
        bytes = plain;
    }
    reader_.feed(bytes);
    static const ReaderMachine::PushTest no_push;
    for (;;) {
        // Pushes come only on an established connection, never in the handshake.
        auto action = reader_.next(machine_.state() == State::ready ? is_push : no_push);
        using Kind = ReaderMachine::Action::Kind;
        if (action.kind == Kind::read) break;
        if (action.kind == Kind::protocol_error) return fail(action.error, errc::protocol_error);
        if (action.kind == Kind::push)
            on_push(*action.reply);
        else if (!answer(*action.reply))
            return;
        // A handler may have failed or stopped the connection.
        if (generation != machine_.generation() || machine_.state() == State::stopped) return;
    }
    if (tls_ec) return read_failed(tls_ec);
    flush_soon();
    read_more();
}

bool Connection::answer(Reply& reply) {
    InFlight answered;
    {
        std::lock_guard lock(mutex_);
        if (!in_flight_.empty()) {
            answered = std::move(in_flight_.front());
            in_flight_.pop_front();
        }
    }
    const auto route = route_answer(reply, {bool(answered.handler), !answered.encoded.empty()}, bool(on_push));
    if (route.rights_narrowed) user_unrestricted_.store(false, std::memory_order_relaxed);
    switch (route.to) {
        case AnswerRoute::To::handler:
            answered.handler(nullptr, std::move(reply));
            return true;
        case AnswerRoute::To::push:
            on_push(reply);
            return true;
        case AnswerRoute::To::requeue:
            {
                std::lock_guard lock(mutex_);
                waiting_.push_front({std::move(answered.encoded), std::move(answered.handler), answered.sent});
            }
            fail(machine_.address().name() + " was demoted to a replica (READONLY); asking the sentinels again");
            return false;
        case AnswerRoute::To::unexpected:
            fail("the server sent a reply nobody asked for: " + reply.describe(), errc::protocol_error);
            return false;
    }
    return false;
}

void Connection::fail(const std::string& why, errc code) {
    const auto state = machine_.state();
    if (state == State::backoff || state == State::idle) {
        // Between attempts: the machine has nothing to close, the reason still tells.
        std::lock_guard lock(mutex_);
        last_error_ = why;
        return;
    }
    run(machine_.lost(machine_.generation(), why, code));
}

// Under both locks, so no writer is in a send() on the descriptor it closes.
void Connection::close_socket() {
    {
        std::scoped_lock lock(write_mutex_, mutex_);
        state_ = machine_.state();
        if (state_ != State::stopped) last_error_ = machine_.why();
        fd_ = -1;
        ++epoch_;
        output_.clear();
        writer_active_ = false;
        flush_posted_ = false;
        held_until_ = {};
        dropped_.swap(in_flight_);
        asio::error_code ignored;
        socket_.close(ignored);
    }
    resolver_.cancel();
    connect_timer_.cancel();
}

void Connection::fail_in_flight(errc code, bool established) {
    std::deque<InFlight> in_flight;
    in_flight.swap(dropped_);
    const std::string may_have_run = established ? "; the command may or may not have run" : "";
    const Failure error = code == errc::client_closed
                              ? client_closed(" (" + server_ + ")" + may_have_run)
                              : Failure(code, "holdfast: connection to " + server_ + " lost (" + machine_.why() +
                                                  ")" + may_have_run);
    if (established && on_lost) on_lost();
    for (auto& f : in_flight)
        if (f.handler) f.handler(error, Reply{});
}

// One periodic check serves both timeouts: a stalled server (oldest reply
// overdue, and nothing read for Config::timeout) and commands waiting too long
// for a connection. Ticking a few times per timeout keeps the hot path free of
// per-command timers and clock reads.
void Connection::watch() {
    const auto period = std::clamp(config_.timeout / 8, std::chrono::milliseconds(5), std::chrono::milliseconds(250));
    watch_timer_.expires_after(period);
    watch_timer_.async_wait([self = shared_from_this()](asio::error_code ec) {
        if (ec || self->machine_.state() == State::stopped) return;
        const auto now = Clock::now();
        // Bytes read since the last tick: the server is answering. A reply
        // late only because this client queued many commands before it (a
        // flood of its own) is not a stalled server; the server's silence is.
        if (self->reads_ != self->reads_seen_) {
            self->reads_seen_ = self->reads_;
            self->heard_ = now;
        }
        bool stalled;
        {
            std::lock_guard lock(self->mutex_);
            stalled = !self->in_flight_.empty() && self->in_flight_.front().due <= now &&
                      now - self->heard_ >= self->config_.timeout;
        }
        if (stalled)
            self->fail("no reply within " + std::to_string(self->config_.timeout.count()) + " ms", errc::reply_timeout);
        self->refresh_role(now);
        self->fail_waiting(nullptr, false);
        self->watch();
    });
}

// Fails waiting commands: all of them with `error`, or (all == false) those
// older than the timeout with an error naming the server and the last failure.
void Connection::fail_waiting(const Failure& error, bool all) {
    std::vector<Pending> expired;
    std::string reason;
    {
        std::lock_guard lock(mutex_);
        const auto cutoff = Clock::now() - config_.timeout;
        while (!waiting_.empty() && (all || waiting_.front().since <= cutoff)) {
            expired.push_back(std::move(waiting_.front()));
            waiting_.pop_front();
        }
        // A peer that accepted but never answered is not "still connecting".
        if (!last_error_.empty()) reason = last_error_;
        else if (machine_.state() == State::handshake) reason = "connected, but no answer to the handshake (PING) yet";
        else if (machine_.state() == State::tls) reason = "connected, but the TLS handshake has not finished";
        else reason = "still connecting";
    }
    if (expired.empty()) return;
    const Failure timeout_error = error ? error
                                        : Failure(errc::not_connected,
                                                  "holdfast: no connection to " + server_ + " within " +
                                                      std::to_string(config_.timeout.count()) + " ms (" + reason +
                                                      "); is the server running and reachable?");
    for (auto& p : expired)
        if (p.handler) p.handler(timeout_error, Reply{});
}

// The commands of submit_one_attempt() that waited for the attempt that failed.
void Connection::fail_one_attempt(const std::string& why) {
    std::vector<Pending> failed;
    {
        std::lock_guard lock(mutex_);
        const auto kept = std::stable_partition(waiting_.begin(), waiting_.end(),
                                                [](const Pending& p) { return !p.one_attempt; });
        std::move(kept, waiting_.end(), std::back_inserter(failed));
        waiting_.erase(kept, waiting_.end());
    }
    if (failed.empty()) return;
    const auto error = one_attempt_error(why);
    for (auto& p : failed)
        if (p.handler) p.handler(error, Reply{});
}

Failure Connection::one_attempt_error(const std::string& why) const {
    return {errc::not_connected, "holdfast: no connection to " + server_ + " (" + why + ")"};
}

void Connection::tell(Event::Kind kind, const std::string& why) const {
    if (!config_.on_event) return;
    Event event;
    event.kind = kind;
    event.server = address();
    event.detail = why;
    config_.on_event(event);
}

}  // namespace holdfast::detail
