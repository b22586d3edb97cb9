#include "redis_cluster.hpp"

#include <chrono>
#include <stdexcept>
#include <thread>

#include "sync_redis.hpp"

namespace holdfast::support {

namespace {

constexpr std::size_t slots = 16384;

std::string reply_text(const redisReply* reply) {
    if (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS || reply->type == REDIS_REPLY_ERROR)
        return std::string(reply->str, reply->len);
    return {};
}
std::string reply_text(const ReplyPtr& reply) { return reply_text(reply.get()); }

// Throws on an error reply: setting up the cluster must not half-fail silently.
void must(SyncRedis& redis, const std::vector<std::string>& args) {
    auto reply = redis.command(args);
    if (reply->type == REDIS_REPLY_ERROR) throw std::runtime_error("RedisCluster: " + args[0] + " " +
                                                                   (args.size() > 1 ? args[1] : "") + ": " +
                                                                   reply_text(reply));
}

}  // namespace

RedisCluster::RedisCluster(std::size_t masters, std::vector<std::string> extra)
    : RedisCluster(ClusterOptions{masters, 0, 5000, std::move(extra)}) {}

RedisCluster::RedisCluster(const ClusterOptions& options) : masters_(options.masters), replicas_(options.replicas) {
    std::vector<std::string> args{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                  "--cluster-node-timeout", std::to_string(options.node_timeout_ms)};
    args.insert(args.end(), options.extra.begin(), options.extra.end());
    const std::size_t total = masters_ * (1 + replicas_);
    for (std::size_t i = 0; i < total; ++i) nodes_.push_back(std::make_unique<RedisServer>(args, 55535));
    for (std::size_t i = 0; i < total; ++i) ids_.push_back(SyncRedis(port(i)).string({"CLUSTER", "MYID"}));
    for (std::size_t i = 0; i < masters_; ++i) {
        SyncRedis redis(port(i));
        // Distinct epochs, as redis-cli --cluster create sets them: no collision to resolve.
        must(redis, {"CLUSTER", "SET-CONFIG-EPOCH", std::to_string(i + 1)});
        must(redis, {"CLUSTER", "ADDSLOTSRANGE", std::to_string(i * slots / masters_),
                     std::to_string((i + 1) * slots / masters_ - 1)});
    }
    SyncRedis first(port(0));
    for (std::size_t i = 1; i < total; ++i) must(first, {"CLUSTER", "MEET", "127.0.0.1", std::to_string(port(i))});
    // Replica r of master m is node masters + m * replicas + r. REPLICATE
    // needs the replica to know its master first (gossip after the MEET).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (std::size_t i = masters_; i < total; ++i) {
        const std::size_t master = (i - masters_) / replicas_;
        SyncRedis redis(port(i));
        for (;;) {
            auto reply = redis.command({"CLUSTER", "REPLICATE", node_id(master)});
            if (reply->type != REDIS_REPLY_ERROR) break;
            if (std::chrono::steady_clock::now() > deadline)
                throw std::runtime_error("RedisCluster: node :" + std::to_string(port(i)) + " refused to replicate :" +
                                         std::to_string(port(master)) + ": " + reply_text(reply));
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
    wait_until_ok();
    if (replicas_ > 0) wait_for_replicas(std::chrono::seconds(30));
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

std::size_t RedisCluster::any_running() const {
    for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (running(i)) return i;
    throw std::runtime_error("RedisCluster: no node runs");
}

std::size_t RedisCluster::slot_of(const std::string& key) const {
    SyncRedis node(port(any_running()));
    return static_cast<std::size_t>(node.integer({"CLUSTER", "KEYSLOT", key}));
}

std::size_t RedisCluster::owner_of(std::size_t slot) const {
    SyncRedis redis(port(any_running()));
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

std::pair<std::string, long long> RedisCluster::role(std::size_t i) const {
    auto reply = SyncRedis(port(i)).command({"ROLE"});
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 3) return {};
    std::string kind = reply_text(reply->element[0]);
    return {kind, kind == "slave" ? reply->element[2]->integer : 0};
}

std::size_t RedisCluster::replica_of(std::size_t primary) const {
    for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (i != primary && running(i) && role(i) == std::pair<std::string, long long>{"slave", port(primary)}) return i;
    throw std::runtime_error("RedisCluster: node :" + std::to_string(port(primary)) + " has no running replica");
}

void RedisCluster::failover(std::size_t replica) {
    const auto [kind, master_port] = role(replica);
    if (kind != "slave") throw std::runtime_error("RedisCluster: node :" + std::to_string(port(replica)) + " is no replica");
    std::size_t slot = slots;  // one the master serves: its whole range moves at once
    {
        SyncRedis redis(port(replica));
        auto map = redis.command({"CLUSTER", "SLOTS"});
        for (std::size_t r = 0; r < map->elements && slot == slots; ++r)
            if (map->element[r]->element[2]->element[1]->integer == master_port)
                slot = static_cast<std::size_t>(map->element[r]->element[0]->integer);
    }
    if (slot == slots) throw std::runtime_error("RedisCluster: the master of :" + std::to_string(port(replica)) + " serves no slot");
    // The masters vote for a replica of one master once per 2 x node timeout:
    // a failover soon after the last one of the same pair times out (after
    // 5 s) unpromoted, and is asked for again, as an operator would.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
        if (role(replica).first == "slave") {
            SyncRedis redis(port(replica));
            must(redis, {"CLUSTER", "FAILOVER"});
        }
        try {
            wait_for_owner(slot, replica, std::chrono::seconds(6));
            return;
        } catch (const std::runtime_error&) {
            if (std::chrono::steady_clock::now() > deadline) throw;
        }
    }
}

void RedisCluster::wait_for_owner(std::size_t slot, std::size_t now, std::chrono::milliseconds within) const {
    const auto deadline = std::chrono::steady_clock::now() + within;
    for (;;) {
        bool agreed = true;
        for (std::size_t i = 0; i < nodes_.size() && agreed; ++i) {
            if (!running(i)) continue;
            try {
                auto map = SyncRedis(port(i)).command({"CLUSTER", "SLOTS"});
                agreed = false;
                for (std::size_t r = 0; r < map->elements; ++r) {
                    const auto* range = map->element[r];
                    if (static_cast<std::size_t>(range->element[0]->integer) <= slot &&
                        static_cast<std::size_t>(range->element[1]->integer) >= slot)
                        agreed = range->element[2]->element[1]->integer == port(now);
                }
            } catch (const std::runtime_error&) {
                agreed = false;  // restarting
            }
        }
        if (agreed) return;
        if (std::chrono::steady_clock::now() > deadline)
            throw std::runtime_error("RedisCluster: the nodes do not all say :" + std::to_string(port(now)) +
                                     " serves slot " + std::to_string(slot) + "; see its " + nodes_.at(now)->dir() +
                                     "/redis.log");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

// Every running node that is not one of the masters' count is a replica with its link up.
void RedisCluster::wait_for_replicas(std::chrono::milliseconds within) const {
    const auto deadline = std::chrono::steady_clock::now() + within;
    for (;;) {
        std::size_t running_nodes = 0, linked = 0;
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            if (!running(i)) continue;
            ++running_nodes;
            try {
                auto reply = SyncRedis(port(i)).command({"ROLE"});
                if (reply->type == REDIS_REPLY_ARRAY && reply->elements >= 4 &&
                    reply_text(reply->element[0]) == "slave" &&
                    reply_text(reply->element[3]) == "connected")
                    ++linked;
            } catch (const std::runtime_error&) {
            }
        }
        if (running_nodes >= masters_ && linked == running_nodes - masters_) return;
        if (std::chrono::steady_clock::now() > deadline)
            throw std::runtime_error("RedisCluster: " + std::to_string(linked) + " replica(s) linked of " +
                                     std::to_string(running_nodes - std::min(running_nodes, masters_)) +
                                     " expected; see the nodes' redis.log");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

void RedisCluster::start_move(std::size_t slot, std::size_t to) {
    const std::size_t from = owner_of(slot);
    SyncRedis target(port(to)), source(port(from));
    must(target, {"CLUSTER", "SETSLOT", std::to_string(slot), "IMPORTING", node_id(from)});
    must(source, {"CLUSTER", "SETSLOT", std::to_string(slot), "MIGRATING", node_id(to)});
}

void RedisCluster::finish_move(std::size_t slot, std::size_t to, std::chrono::milliseconds between_keys) {
    const std::size_t from = owner_of(slot);
    SyncRedis source(port(from));
    const bool one_by_one = between_keys.count() > 0;
    for (;;) {
        auto keys = source.command({"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), one_by_one ? "1" : "100"});
        if (keys->elements == 0) break;
        std::vector<std::string> migrate{"MIGRATE", "127.0.0.1", std::to_string(port(to)), "", "0", "5000", "KEYS"};
        for (std::size_t k = 0; k < keys->elements; ++k)
            migrate.emplace_back(keys->element[k]->str, keys->element[k]->len);
        must(source, migrate);
        if (one_by_one) std::this_thread::sleep_for(between_keys);
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
