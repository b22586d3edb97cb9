#include "transport/router.hpp"

#include <functional>
#include <future>

#include "transport/cluster.hpp"
#include "transport/sentinel.hpp"

namespace holdfast::detail {

namespace {

// One server, or the master the sentinels name: a pool of connections, a
// command for key K always on the same one (so commands on one lock keep
// their order).
class ServerRouter final : public Router {
public:
    ServerRouter(asio::io_context& io, const Config& config) : io_(io), config_(config) {
        for (std::size_t i = 0; i < config_.pool_size(); ++i)
            connections_.push_back(std::make_shared<Connection>(io_, config_));
        auto pubsub = std::make_shared<Connection>(io_, config_);
        subscriber_ = std::make_unique<Subscriber>(io_, pubsub, config_.timeout);
        if (config_.topology == Topology::sentinel) follow_sentinels(pubsub);
        for (auto& c : connections_) c->start();
        pubsub->start();
    }

    void send(std::string_view key, std::string_view encoded, ReplyHandler handler) override {
        connection_for(key).submit(encoded, std::move(handler));
    }
    void send_to(const ServerAddress&, std::string_view encoded, ReplyHandler handler) override {
        connection_for({}).submit(encoded, std::move(handler));
    }
    std::vector<ServerAddress> masters() const override { return {ServerAddress{config_.server_name(), 0}}; }
    Connection& connection_for(std::string_view key) override { return *connections_[shard_of(key)]; }
    std::size_t shard_of(std::string_view key) const override {
        return std::hash<std::string_view>{}(key) % connections_.size();
    }
    bool shards_channel(std::string_view, std::string_view) const override { return false; }
    Subscriber& subscriber() override { return *subscriber_; }
    void stop_now() override {
        for (auto& c : connections_) c->stop_now();
        subscriber_->stop_now();
        if (sentinels_) sentinels_->stop_now();
    }

private:
    /// Topology::sentinel: connections find the master through the sentinels
    /// and leave it when they name another (Sentinels::watch). Throws if no
    /// sentinel names it.
    void follow_sentinels(const std::shared_ptr<Connection>& pubsub);

    asio::io_context& io_;
    const Config& config_;
    std::vector<std::shared_ptr<Connection>> connections_;
    std::unique_ptr<Subscriber> subscriber_;
    std::shared_ptr<Sentinels> sentinels_;
};

void ServerRouter::follow_sentinels(const std::shared_ptr<Connection>& pubsub) {
    sentinels_ = std::make_shared<Sentinels>(io_, config_);
    // Asked once here, on this thread (the loop thread starts later), so a
    // wrong master name or unreachable sentinels fail the Client's construction.
    bool answered = false;
    Failure failure;
    sentinels_->locate([&](Failure error, ServerAddress) {
        failure = std::move(error);
        answered = true;
    });
    while (!answered) io_.run_one();
    if (failure) failure.raise();
    auto all = connections_;
    all.push_back(pubsub);
    for (auto& c : all)
        c->locate = [sentinels = sentinels_](LocateHandler done) { sentinels->locate(std::move(done)); };
    // Weak: the connections hold the sentinels (their locator), not the reverse.
    std::vector<std::weak_ptr<Connection>> followers(all.begin(), all.end());
    sentinels_->watch([followers, master = config_.sentinel_master](const ServerAddress& now) {
        for (auto& weak : followers)
            if (auto c = weak.lock())
                c->drop_unless(now, "failover: the sentinels moved master " + master + " to " + now.name());
    });
}

// A cluster's masters, by slot (Cluster), and a subscriber per channel's node.
class ClusterRouter final : public Router {
public:
    ClusterRouter(asio::io_context& io, const Config& config) : io_(io), config_(config), cluster_(io, config) {}

    // The slot map is read before the transport's constructor returns, so
    // that the first command goes to the right master and shards_channel()
    // is settled.
    void start() override;

    void send(std::string_view key, std::string_view encoded, ReplyHandler handler) override {
        cluster_.send(key, std::string(encoded), std::move(handler));
    }
    void send_to(const ServerAddress& master, std::string_view encoded, ReplyHandler handler) override {
        cluster_.send_to(master, encoded, std::move(handler));
    }
    std::vector<ServerAddress> masters() const override { return cluster_.masters(); }
    Connection& connection_for(std::string_view key) override { return *cluster_.connection_for(key); }
    // A script's keys must share one slot.
    std::size_t shard_of(std::string_view key) const override { return key_slot(key); }
    bool shards_channel(std::string_view key, std::string_view channel) const override {
        return sharded_ && key_slot(key) == key_slot(channel);
    }
    Subscriber& subscriber() override { return *subscriber_; }
    void stop_now() override {
        cluster_.stop_now();
        if (subscriber_) subscriber_->stop_now();  // none if start() failed
    }

private:
    asio::io_context& io_;
    const Config& config_;
    Cluster cluster_;
    bool sharded_ = false;
    std::unique_ptr<Subscriber> subscriber_;
};

void ClusterRouter::start() {
    cluster_.discover();
    // As Redisson's shardedSubscriptionMode AUTO: sharded where the cluster has it.
    sharded_ = config_.sharded_subscription == ShardedSubscription::on ||
               (config_.sharded_subscription == ShardedSubscription::automatic && cluster_.supports_sharded_pubsub());
    Subscriber::Routing routing;
    // Classic PUBLISH reaches every node: one connection, to one master, does.
    routing.node_of = [this](const std::string& channel, bool sharded) {
        return cluster_.owner(sharded ? key_slot(channel) : 0);
    };
    routing.connect = [this](const ServerAddress& node) { return cluster_.new_connection(node); };
    routing.lost = [this] { cluster_.refresh(); };
    std::promise<void> made;
    asio::post(io_, [&] {
        subscriber_ = std::make_unique<Subscriber>(io_, std::move(routing), config_.timeout);
        cluster_.on_refreshed = [this] { subscriber_->relocate(); };
        made.set_value();
    });
    made.get_future().get();
}

}  // namespace

std::unique_ptr<Router> make_router(asio::io_context& io, const Config& config) {
    if (config.topology == Topology::cluster) return std::make_unique<ClusterRouter>(io, config);
    return std::make_unique<ServerRouter>(io, config);
}

}  // namespace holdfast::detail
