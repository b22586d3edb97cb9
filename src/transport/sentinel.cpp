#include "transport/sentinel.hpp"

#include <charconv>
#include <optional>

#include "common/quoted.hpp"
#include "config/nat_map.hpp"
#include "holdfast/errors.hpp"
#include "transport/command.hpp"
#include "transport/connection.hpp"
#include "transport/reply.hpp"
#include "transport/tls.hpp"

namespace holdfast::detail {

namespace {

// One short conversation with one sentinel: connect (and TLS, when the
// config has it: rediss-sentinel://), send `request` (one or more commands),
// read `expected` replies, close. Its own socket, so an unreachable sentinel
// costs one connect attempt, not a reconnect loop.
class Ask : public std::enable_shared_from_this<Ask> {
public:
    /// `tls_refused`: the error is TLS refusing the sentinel (its certificate), which retrying cannot fix.
    using Done = std::function<void(std::string error, bool tls_refused, std::vector<Reply> replies)>;

    Ask(asio::io_context& io, const Config& config, std::shared_ptr<asio::ssl::context> tls, std::string request,
        std::size_t expected, Done done)
        : config_(config), tls_context_(std::move(tls)), socket_(io), resolver_(io), timer_(io),
          request_(std::move(request)), expected_(expected), done_(std::move(done)), buffer_(16 * 1024) {}

    void start(const ServerAddress& at, std::chrono::milliseconds timeout) {
        auto self = shared_from_this();
        timer_.expires_after(timeout);
        timer_.async_wait([self, timeout](asio::error_code ec) {
            if (!ec) self->finish("no answer within " + std::to_string(timeout.count()) + " ms");
        });
        const ServerAddress target = nat_mapped(config_.nat_map, at);  // Config::nat_map, as every connection
        resolver_.async_resolve(target.host, std::to_string(target.port), [self, at](asio::error_code ec, auto results) {
            if (ec) return self->finish("cannot resolve: " + ec.message());
            self->socket_.async_connect(asio::generic::stream_protocol::endpoint(results.begin()->endpoint()),
                                        [self, at](asio::error_code ec) {
                                            if (ec) return self->finish("cannot connect: " + ec.message());
                                            self->host_ = at.host;
                                            if (self->tls_context_) return self->handshake();
                                            self->write();
                                        });
        });
    }

private:
    void handshake() {
        tls_ = make_tls_stream(socket_, *tls_context_, config_, host_);
        tls_->async_handshake(asio::ssl::stream_base::client, [self = shared_from_this()](asio::error_code ec) {
            if (is_tls_error(ec)) return self->finish(self->tls_failure(ec));
            if (ec) return self->finish("TLS handshake failed: " + ec.message());
            self->write();
        });
    }

    void write() {
        auto then = [self = shared_from_this()](asio::error_code ec, std::size_t) {
            if (ec) return self->finish("write failed: " + ec.message());
            self->read();
        };
        if (tls_) asio::async_write(*tls_, asio::buffer(request_), then);
        else asio::async_write(socket_, asio::buffer(request_), then);
    }

    void read() {
        auto then = [self = shared_from_this()](asio::error_code ec, std::size_t n) {
            if (ec) {
                if (self->tls_ && is_tls_error(ec))
                    return self->finish(self->tls_failure(ec));
                return self->finish(ec == asio::error::eof ? "closed the connection" : "read failed: " + ec.message());
            }
            try {
                self->reader_.feed(self->buffer_.data(), n);
                while (auto reply = self->reader_.next()) self->replies_.push_back(std::move(*reply));
            } catch (const std::runtime_error& e) {
                return self->finish(std::string(e.what()) + " (is this a sentinel?)");
            }
            if (self->replies_.size() >= self->expected_) return self->finish("");
            self->read();
        };
        if (tls_) tls_->async_read_some(asio::buffer(buffer_), then);
        else socket_.async_read_some(asio::buffer(buffer_), then);
    }

    std::string tls_failure(const asio::error_code& ec) {
        tls_refused_ = true;
        return describe_tls_failure(ec, tls_->native_handle(), config_, host_);
    }

    void finish(std::string error) {
        if (finished_) return;
        finished_ = true;
        timer_.cancel();
        resolver_.cancel();
        asio::error_code ignored;
        socket_.close(ignored);
        done_(std::move(error), tls_refused_, std::move(replies_));
    }

    const Config& config_;  // the Sentinels', which outlive every Ask they start
    std::shared_ptr<asio::ssl::context> tls_context_;
    asio::generic::stream_protocol::socket socket_;
    std::shared_ptr<TlsStream> tls_;  // over socket_, when TLS
    std::string host_;                // the sentinel's, which its certificate must name
    asio::ip::tcp::resolver resolver_;
    asio::steady_timer timer_;
    std::string request_;
    std::size_t expected_;
    Done done_;
    std::vector<char> buffer_;
    ReplyReader reader_;
    std::vector<Reply> replies_;
    bool tls_refused_ = false;
    bool finished_ = false;
};

std::string auth_command(const Config& config) {
    if (config.sentinel_password.empty()) return {};
    return config.sentinel_username.empty()
               ? encode_command({"AUTH", config.sentinel_password})
               : encode_command({"AUTH", config.sentinel_username, config.sentinel_password});
}

std::optional<std::uint16_t> parse_port(const std::string& text) {
    std::uint16_t port = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
    if (ec != std::errc() || end != text.data() + text.size() || port == 0) return std::nullopt;
    return port;
}

}  // namespace

struct Sentinels::Search {
    LocateHandler done;
    std::size_t next = 0;
    std::vector<std::string> outcomes;  // "host:port: what it said", one per sentinel asked
    bool all_refused_auth = true;
    bool all_refused_tls = true;
};

Sentinels::Sentinels(asio::io_context& io, const Config& config)
    : io_(io), config_(config), tls_context_(config.tls.enabled ? make_tls_context(config) : nullptr) {}

void Sentinels::locate(LocateHandler done) {
    auto search = std::make_shared<Search>();
    search->done = std::move(done);
    ask(std::move(search));
}

void Sentinels::ask(std::shared_ptr<Search> search) {
    if (search->next == config_.servers.size()) {
        std::string said;
        for (const auto& o : search->outcomes) said += (said.empty() ? "" : "; ") + o;
        const std::string message = "holdfast: no sentinel gave the address of master " +
                                    quoted(config_.sentinel_master) + " (" + said +
                                    "); check the sentinel addresses, the master name after '#' and the sentinel "
                                    "credentials in the URL";
        const bool refused = !search->outcomes.empty();
        auto error = refused && search->all_refused_auth   ? std::make_exception_ptr(AuthError(message))
                     : refused && search->all_refused_tls ? std::make_exception_ptr(TlsError(message))
                     : std::make_exception_ptr(ConnectionError(message, errc::not_connected));
        return search->done(error, {});
    }
    const ServerAddress sentinel = config_.servers[search->next++];
    const std::string auth = auth_command(config_);
    const std::string request =
        auth + encode_command({"SENTINEL", "get-master-addr-by-name", config_.sentinel_master});
    const std::size_t expected = auth.empty() ? 1 : 2;
    auto ask = std::make_shared<Ask>(io_, config_, tls_context_, request, expected, [self = shared_from_this(), search, sentinel, expected](
                                                                 std::string error, bool tls_refused,
                                                                 std::vector<Reply> replies) {
        auto note = [&](const std::string& what, bool auth_refused = false) {
            search->outcomes.push_back(sentinel.name() + ": " + what);
            if (!auth_refused) search->all_refused_auth = false;
            if (!tls_refused) search->all_refused_tls = false;
            self->ask(search);
        };
        if (!error.empty()) return note(error);
        if (expected == 2 && replies[0].is_error()) return note("AUTH refused (" + replies[0].str + ")", true);
        const Reply& answer = replies.back();
        if (answer.is_error()) return note(answer.str);
        if (answer.is_nil()) return note("knows no master of that name");
        std::optional<std::uint16_t> port;
        if (answer.is_array() && answer.elements.size() == 2) port = parse_port(answer.elements[1].str);
        if (!port) return note("unexpected answer " + answer.describe());
        search->done(nullptr, ServerAddress{answer.elements[0].str, *port});
    });
    ask->start(sentinel, config_.connect_timeout);
}

void Sentinels::watch(std::function<void(const ServerAddress&)> on_switch) {
    Config c = config_;
    c.topology = Topology::single;
    c.username = config_.sentinel_username;
    c.password = config_.sentinel_password;
    c.database = 0;
    c.replica_sync = ReplicaSync::off;
    c.host = config_.servers.front().host;
    c.port = config_.servers.front().port;
    watcher_ = std::make_shared<Connection>(io_, c);
    // One sentinel at a time, the next after each drop.
    watcher_->locate = [this](LocateHandler done) {
        const ServerAddress next = config_.servers[next_watched_++ % config_.servers.size()];
        done(nullptr, next);
    };
    watcher_->on_ready = [this] { watcher_->submit(encode_command({"SUBSCRIBE", "+switch-master"}), nullptr); };
    watcher_->is_push = [](const Reply& reply) { return reply.is_array(); };
    // "+switch-master": "<master> <old ip> <old port> <new ip> <new port>".
    watcher_->on_push = [this, on_switch = std::move(on_switch)](Reply reply) {
        if (reply.elements.size() != 3 || reply.elements[0].str != "message") return;
        std::vector<std::string> words;
        std::string_view text = reply.elements[2].str;
        while (!text.empty()) {
            const auto space = text.find(' ');
            words.emplace_back(text.substr(0, space));
            text = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
        }
        if (words.size() != 5 || words[0] != config_.sentinel_master) return;
        if (auto port = parse_port(words[4])) on_switch(ServerAddress{words[3], *port});
    };
    watcher_->start();
}

void Sentinels::stop_now() {
    if (watcher_) watcher_->stop_now();
}

}  // namespace holdfast::detail
