#include "redis_cluster.hpp"

#include <chrono>
#include <stdexcept>
#include <thread>

#include "sync_redis.hpp"

namespace holdfast::support {

namespace {

constexpr std::size_t slots = 16384;

std::string reply_text(const ReplyPtr& reply) {
    if (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS || reply->type == REDIS_REPLY_ERROR)
        return std::string(reply->str, reply->len);
    return {};
}

// Throws on an error reply: setting up the cluster must not half-fail silently.
void must(SyncRedis& redis, const std::vector<std::string>& args) {
    auto reply = redis.command(args);
    if (reply->type == REDIS_REPLY_ERROR) throw std::runtime_error("RedisCluster: " + args[0] + " " +
                                                                   (args.size() > 1 ? args[1] : "") + ": " +
                                                                   reply_text(reply));
}

}  // namespace

RedisCluster::RedisCluster(std::size_t masters, std::vector<std::string> extra) {
    std::vector<std::string> args{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                  "--cluster-node-timeout", "5000"};
    args.insert(args.end(), extra.begin(), extra.end());
    for (std::size_t i = 0; i < masters; ++i) nodes_.push_back(std::make_unique<RedisServer>(args, 55535));
    for (std::size_t i = 0; i < masters; ++i) {
        SyncRedis redis(port(i));
        ids_.push_back(redis.string({"CLUSTER", "MYID"}));
        // Distinct epochs, as redis-cli --cluster create sets them: no collision to resolve.
        must(redis, {"CLUSTER", "SET-CONFIG-EPOCH", std::to_string(i + 1)});
        must(redis, {"CLUSTER", "ADDSLOTSRANGE", std::to_string(i * slots / masters),
                     std::to_string((i + 1) * slots / masters - 1)});
    }
    SyncRedis first(port(0));
    for (std::size_t i = 1; i < masters; ++i) must(first, {"CLUSTER", "MEET", "127.0.0.1", std::to_string(port(i))});
    wait_until_ok();
}

RedisCluster::~RedisCluster() = default;

std::string RedisCluster::url() const {
    std::string url = "redis-cluster://";
    for (std::size_t i = 0; i < nodes_.size(); ++i) url += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(port(i));
    return url;
}

std::string RedisCluster::node_id(std::size_t i) const { return ids_.at(i); }

void RedisCluster::wait_until_ok() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
        bool ok = true;
        for (std::size_t i = 0; i < nodes_.size() && ok; ++i) {
            SyncRedis redis(port(i));
            const std::string info = redis.string({"CLUSTER", "INFO"});
            ok = info.find("cluster_state:ok") != std::string::npos &&
                 info.find("cluster_known_nodes:" + std::to_string(nodes_.size())) != std::string::npos;
        }
        if (ok) return;
        if (std::chrono::steady_clock::now() > deadline)
            throw std::runtime_error("RedisCluster: no cluster_state:ok within 30 s; see " + node(0).dir() +
                                     "/redis.log");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

std::size_t RedisCluster::slot_of(const std::string& key) const {
    SyncRedis node(port(0));
    return static_cast<std::size_t>(node.integer({"CLUSTER", "KEYSLOT", key}));
}

std::size_t RedisCluster::owner_of(std::size_t slot) const {
    SyncRedis redis(port(0));
    auto reply = redis.command({"CLUSTER", "SLOTS"});
    for (std::size_t r = 0; r < reply->elements; ++r) {
        const auto* range = reply->element[r];
        if (static_cast<std::size_t>(range->element[0]->integer) > slot ||
            static_cast<std::size_t>(range->element[1]->integer) < slot)
            continue;
        const auto port = range->element[2]->element[1]->integer;
        for (std::size_t i = 0; i < nodes_.size(); ++i)
            if (this->port(i) == port) return i;
    }
    throw std::runtime_error("RedisCluster: no node serves slot " + std::to_string(slot));
}

void RedisCluster::start_move(std::size_t slot, std::size_t to) {
    const std::size_t from = owner_of(slot);
    SyncRedis target(port(to)), source(port(from));
    must(target, {"CLUSTER", "SETSLOT", std::to_string(slot), "IMPORTING", node_id(from)});
    must(source, {"CLUSTER", "SETSLOT", std::to_string(slot), "MIGRATING", node_id(to)});
}

void RedisCluster::finish_move(std::size_t slot, std::size_t to) {
    const std::size_t from = owner_of(slot);
    SyncRedis source(port(from));
    for (;;) {
        auto keys = source.command({"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), "100"});
        if (keys->elements == 0) break;
        std::vector<std::string> migrate{"MIGRATE", "127.0.0.1", std::to_string(port(to)), "", "0", "5000", "KEYS"};
        for (std::size_t k = 0; k < keys->elements; ++k)
            migrate.emplace_back(keys->element[k]->str, keys->element[k]->len);
        must(source, migrate);
    }
    // The new owner first, so it never refuses the slot; then everyone.
    for (std::size_t i : {to, from}) {
        SyncRedis redis(port(i));
        must(redis, {"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", node_id(to)});
    }
    for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (i != to && i != from) {
            SyncRedis redis(port(i));
            must(redis, {"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", node_id(to)});
        }
}

void RedisCluster::move_slot(std::size_t slot, std::size_t to) {
    start_move(slot, to);
    finish_move(slot, to);
}

}  // namespace holdfast::support
