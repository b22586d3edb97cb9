#include "transport/sentinel.hpp"

#include <algorithm>
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

    /// Ends the conversation now (another sentinel answered); done is told "abandoned".
    void abandon() { finish("abandoned: another sentinel answered"); }

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

// SENTINEL get-master-addr-by-name's answer: [ip, port].
std::optional<ServerAddress> address_in(const Reply& answer) {
    if (!answer.is_array() || answer.elements.size() != 2) return std::nullopt;
    const auto port = parse_port(answer.elements[1].str);
    if (!port) return std::nullopt;
    return ServerAddress{answer.elements[0].str, *port};
}

// SENTINEL MASTER's answer, a flat list of fields and values: its
// "config-epoch", -1 if absent or refused (an ACL without sentinel|master).
long long config_epoch_in(const Reply& answer) {
    for (std::size_t i = 0; i + 1 < answer.elements.size(); i += 2) {
        if (answer.elements[i].str != "config-epoch") continue;
        const std::string& text = answer.elements[i + 1].str;
        long long epoch = -1;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), epoch);
        return ec == std::errc() && end == text.data() + text.size() ? epoch : -1;
    }
    return -1;
}

const std::string switch_channel = "+switch-master";

}  // namespace

// While no sentinel has answered, one more is asked every this long, the
// earlier ones still heard: a hung sentinel (it accepts, then says nothing)
// costs this, not Config::connect_timeout, before the next is asked.
constexpr std::chrono::milliseconds next_sentinel_after{500};

struct Sentinels::Search {
    explicit Search(asio::io_context& io) : hedge(io) {}
    LocateHandler done;  // empty once told
    std::size_t next = 0;
    std::vector<std::weak_ptr<Ask>> asking;  // abandoned once one answers
    std::size_t pending = 0;                 // of them, not finished
    std::vector<std::string> outcomes;       // "host:port: what it said", one per sentinel that failed
    bool all_refused_auth = true;
    bool all_refused_tls = true;
    asio::steady_timer hedge;  // next_sentinel_after, for the next sentinel
};

Sentinels::Sentinels(asio::io_context& io, const Config& config)
    : io_(io), config_(config), tls_context_(config.tls.enabled ? make_tls_context(config) : nullptr), timer_(io) {}

void Sentinels::locate(LocateHandler done) {
    if (master_) {
        done(nullptr, *master_);
        return check_all();
    }
    auto search = std::make_shared<Search>(io_);
    search->done = [this, done = std::move(done)](Failure error, ServerAddress master) {
        if (!error && !master_) master_ = master;
        done(std::move(error), std::move(master));
    };
    ask(std::move(search));
}

// The sentinels in the order given: the next one as soon as one fails, or
// after next_sentinel_after while those asked are silent; the first address
// any of them gives wins, and the others are abandoned.
void Sentinels::ask(std::shared_ptr<Search> search) {
    if (!search->done) return;
    if (search->next == config_.servers.size()) {
        if (search->pending > 0) return;  // the last ones asked may still answer
        std::string said;
        for (const auto& o : search->outcomes) said += (said.empty() ? "" : "; ") + o;
        const std::string message = "holdfast: no sentinel gave the address of master " +
                                    quoted(config_.sentinel_master) + " (" + said +
                                    "); check the sentinel addresses, the master name after '#' and the sentinel "
                                    "credentials in the URL";
        const bool refused = !search->outcomes.empty();
        const errc code = refused && search->all_refused_auth  ? errc::auth_refused
                          : refused && search->all_refused_tls ? errc::tls_failed
                                                               : errc::not_connected;
        return tell(*search, Failure(code, message), {});
    }
    const ServerAddress sentinel = config_.servers[search->next++];
    const std::string auth = auth_command(config_);
    const std::string request =
        auth + encode_command({"SENTINEL", "get-master-addr-by-name", config_.sentinel_master});
    const std::size_t expected = auth.empty() ? 1 : 2;
    auto ask = std::make_shared<Ask>(io_, config_, tls_context_, request, expected, [self = shared_from_this(), search, sentinel, expected](
                                                                 std::string error, bool tls_refused,
                                                                 std::vector<Reply> replies) {
        --search->pending;
        if (!search->done) return;  // another answered first
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
        auto master = address_in(answer);
        if (!master) return note("unexpected answer " + answer.describe());
        self->tell(*search, nullptr, std::move(*master));
    });
    search->asking.push_back(ask);
    ++search->pending;
    ask->start(sentinel, config_.connect_timeout);
    search->hedge.expires_after(next_sentinel_after);
    search->hedge.async_wait([self = shared_from_this(), search](asio::error_code ec) {
        if (!ec) self->ask(search);
    });
}

void Sentinels::tell(Search& search, Failure error, ServerAddress master) {
    auto done = std::move(search.done);
    search.done = nullptr;
    search.hedge.cancel();
    for (auto& weak : search.asking)
        if (auto ask = weak.lock()) ask->abandon();
    done(std::move(error), std::move(master));
}

void Sentinels::watch(std::function<void(const ServerAddress&)> on_master) {
    on_master_ = std::move(on_master);
    watchers_.resize(config_.servers.size());
    for (std::size_t i = 0; i < watchers_.size(); ++i) {
        Config c = config_;
        c.topology = Topology::single;
        c.username = config_.sentinel_username;
        c.password = config_.sentinel_password;
        c.database = 0;
        c.replica_sync = ReplicaSync::off;
        c.host = config_.servers[i].host;
        c.port = config_.servers[i].port;
        auto connection = std::make_shared<Connection>(io_, c);
        // Raw `this`: the connections run these only on the loop, which stops
        // them (stop_now) before the Sentinels go.
        connection->on_ready = [this, i] {
            watchers_[i].asking = false;
            check(i);
        };
        // Pub/sub replies; SENTINEL's answers are arrays too, and go to their handlers.
        connection->is_push = [](const Reply& reply) {
            if (!reply.is_array() || reply.elements.size() != 3) return false;
            const std::string& kind = reply.elements[0].str;
            return kind == "message" || kind == "subscribe" || kind == "unsubscribe";
        };
        // "+switch-master": "<master> <old ip> <old port> <new ip> <new port>";
        // only a hint to ask that sentinel now, so that its answer, with its
        // epoch, is the one word followed. While answers are due on this
        // connection they already cover the switch: it was told before the
        // UNSUBSCRIBE that precedes them.
        connection->on_push = [this, i](const Reply& reply) {
            if (reply.elements.size() != 3 || reply.elements[0].str != "message") return;
            const std::string& text = reply.elements[2].str;
            if (text.compare(0, config_.sentinel_master.size() + 1, config_.sentinel_master + " ") != 0) return;
            if (!watchers_[i].asking) check(i);
        };
        watchers_[i].connection = std::move(connection);
    }
    for (auto& w : watchers_) w.connection->start();
    tick();
}

// A subscribed connection may send nothing but (UN)SUBSCRIBE and PING (RESP2),
// so the question goes between an UNSUBSCRIBE and a SUBSCRIBE: a switch is
// then told before the UNSUBSCRIBE, answered, or told after the SUBSCRIBE.
// The epoch is read before the address, so an answer never pairs an old
// address with a newer epoch. Unanswered within Config::timeout, the
// connection is dropped and made again (Connection's reply timeout): a hung
// sentinel is noticed within sentinel_scan_interval + timeout.
void Sentinels::check(std::size_t i) {
    Connection& connection = *watchers_[i].connection;
    watchers_[i].asking = true;
    auto epoch = std::make_shared<long long>(-1);
    connection.submit(encode_command({"UNSUBSCRIBE", switch_channel}), nullptr);
    connection.submit(encode_command({"SENTINEL", "MASTER", config_.sentinel_master}),
                      [epoch](std::exception_ptr error, Reply reply) {
                          if (!error) *epoch = config_epoch_in(reply);
                      });
    connection.submit(encode_command({"SENTINEL", "get-master-addr-by-name", config_.sentinel_master}),
                      [this, i, epoch](std::exception_ptr error, Reply reply) {
                          watchers_[i].asking = false;
                          if (error) return;
                          if (auto master = address_in(reply)) heard(i, std::move(*master), *epoch);
                      });
    connection.submit(encode_command({"SUBSCRIBE", switch_channel}), nullptr);
}

void Sentinels::check_all() {
    for (std::size_t i = 0; i < watchers_.size(); ++i)
        if (watchers_[i].connection->ready() && !watchers_[i].asking) check(i);
}

// One timer for every sentinel: ask each again, and tell the master followed
// again, so that a connection made to an address the sentinels have replaced
// since (located just before the switch) leaves it too.
void Sentinels::tick() {
    if (stopped_) return;
    check_all();
    if (master_ && on_master_) on_master_(*master_);
    timer_.expires_after(config_.sentinel_scan_interval);
    timer_.async_wait([weak = weak_from_this()](asio::error_code ec) {
        if (auto self = weak.lock(); self && !ec) self->tick();
    });
}

// The newest configuration epoch any sentinel last named wins: a sentinel
// that lags behind (restarted from an old configuration, or cut off from the
// others) names the master it knew, in an older epoch, and is not followed. Among the answers in that epoch, the master
// already followed stays, else the latest answer goes. Sentinels that give no
// epoch (SENTINEL MASTER refused): the latest answer, as Redis's guidelines
// say. Each sentinel's last answer counts, so a deployment whose epochs went
// back (its masters monitored anew) is followed once every sentinel says so.
void Sentinels::heard(std::size_t i, ServerAddress master, long long epoch) {
    watchers_[i].said = Answer{std::move(master), epoch, ++answers_};
    long long newest = -1;
    for (const auto& w : watchers_)
        if (w.said) newest = std::max(newest, w.said->epoch);
    const Answer* latest = nullptr;
    bool followed = false;
    for (const auto& w : watchers_) {
        if (!w.said || w.said->epoch != newest) continue;
        followed |= master_ && w.said->master == *master_;
        if (!latest || w.said->order > latest->order) latest = &*w.said;
    }
    if ((newest >= 0 && followed) || (master_ && latest->master == *master_)) return;
    master_ = latest->master;
    if (on_master_) on_master_(*master_);
}

void Sentinels::stop_now() {
    stopped_ = true;
    timer_.cancel();
    for (auto& w : watchers_) w.connection->stop_now();
}

}  // namespace holdfast::detail
