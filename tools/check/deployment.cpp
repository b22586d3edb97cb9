#include "deployment.hpp"

#include "sync_redis.hpp"

namespace holdfast::check {

std::vector<std::string> lock_server_args(const Scenario& scenario, int users) {
    std::vector<std::string> args{"--enable-debug-command", "local"};
    if (scenario.has(Nemesis::restart_persistent))
        for (const char* a : {"--appendonly", "yes", "--appendfsync", "always"}) args.emplace_back(a);
    for (int slot = 0; slot < users; ++slot)
        args.insert(args.end(), {"--user", acl_user_of(slot), "on", std::string(">") + acl_password, "~*", "&*", "+@all"});
    return args;
}

namespace {

// Users made at run time, then written into the node's config file, where
// the sentinels keep rewriting it: a restarted node reads them from there (on
// its command line as well, they would be defined twice, which fails it).
void add_users(support::RedisServer& node, int users) {
    support::SyncRedis admin(node.port());
    for (int slot = 0; slot < users; ++slot)
        admin.command({"ACL", "SETUSER", acl_user_of(slot), "on", std::string(">") + acl_password, "~*", "&*", "+@all"});
    if (users > 0) admin.command({"CONFIG", "REWRITE"});
}

}  // namespace

Deployment::Deployment(Topology topology, const Scenario& scenario, int users) : topology_(topology) {
    const std::vector<std::string> args = lock_server_args(scenario, topology == Topology::sentinel ? 0 : users);
    switch (topology) {
        case Topology::sentinel:
            sentinels_ = std::make_unique<support::SentinelGroup>("holdfast-check", args);
            for (auto& node : sentinels_->nodes) add_users(*node, users);
            first_master_ = &sentinels_->master();
            return;
        case Topology::cluster: {
            // A replica per master where a primary fails over; a low node timeout
            // so that a killed one is replaced within seconds.
            const bool replicas = scenario.has(Nemesis::cluster_failover) ||
                                  scenario.has(Nemesis::cluster_kill_primary) ||
                                  scenario.has(Nemesis::cluster_kill_primary_waiting);
            support::ClusterOptions options{.masters = 3, .replicas = replicas ? 1u : 0u,
                                            .node_timeout_ms = replicas ? failover_node_timeout_ms : 5000,
                                            .extra = args};
            if (replicas) options.extra.insert(options.extra.end(), {"--repl-diskless-sync-delay", "0"});
            cluster_ = std::make_unique<support::RedisCluster>(options);
            first_master_ = &cluster_->node(0);
            return;
        }
        case Topology::replicated: {
            std::vector<std::string> master_args = args;
            master_args.insert(master_args.end(), {"--repl-diskless-sync-delay", "0"});
            servers_.push_back(std::make_unique<support::RedisServer>(master_args));
            std::vector<std::string> replica_args = args;
            replica_args.insert(replica_args.end(), {"--replicaof", "127.0.0.1", std::to_string(servers_[0]->port())});
            servers_.push_back(std::make_unique<support::RedisServer>(replica_args));
            support::SentinelGroup::wait_for_replicas(servers_[0]->port(), 1);
            break;
        }
        case Topology::automatic:
        case Topology::server:
            servers_.push_back(std::make_unique<support::RedisServer>(args));
            break;
    }
    first_master_ = servers_.front().get();
}

Deployment::~Deployment() = default;

std::string Deployment::url() const {
    if (sentinels_) return sentinels_->url();
    if (cluster_) return cluster_->url();
    return {};
}

std::vector<support::RedisServer*> Deployment::data_nodes() {
    std::vector<support::RedisServer*> nodes;
    if (sentinels_)
        for (auto& node : sentinels_->nodes) nodes.push_back(node.get());
    else if (cluster_)
        for (std::size_t i = 0; i < cluster_->size(); ++i) nodes.push_back(&cluster_->node(i));
    else
        for (auto& server : servers_) nodes.push_back(server.get());
    return nodes;
}

std::vector<std::uint16_t> Deployment::data_ports() const {
    std::vector<std::uint16_t> ports;
    if (sentinels_)
        for (const auto& node : sentinels_->nodes) ports.push_back(node->port());
    else if (cluster_)
        for (std::size_t i = 0; i < cluster_->size(); ++i) ports.push_back(cluster_->port(i));
    else
        for (const auto& server : servers_) ports.push_back(server->port());
    return ports;
}

support::RedisServer* Deployment::replica() {
    if (sentinels_) return &sentinels_->replica();
    return servers_.size() > 1 ? servers_[1].get() : nullptr;
}

support::RedisServer* Deployment::master() {
    if (sentinels_) return &sentinels_->master();
    return cluster_ ? nullptr : servers_.front().get();
}

}  // namespace holdfast::check
