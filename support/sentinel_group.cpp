#include "sentinel_group.hpp"

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <thread>

#include "sync_redis.hpp"

namespace holdfast::support {

namespace {

using Clock = std::chrono::steady_clock;

// Polls `condition` until it holds or `within` passes; then throws `what`.
template <class Condition>
void wait_until(Condition condition, std::chrono::seconds within, const std::string& what) {
    const auto deadline = Clock::now() + within;
    while (Clock::now() < deadline) {
        try {
            if (condition()) return;
        } catch (const std::exception&) {
            // A node restarting or not up yet: ask again.
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    throw std::runtime_error("SentinelGroup: " + what + " within " + std::to_string(within.count()) + " s");
}

// A data node or sentinel, plain or (with `tls`) also listening for TLS.
std::unique_ptr<RedisServer> start_process(const std::optional<TlsServer>& tls, std::vector<std::string> extra,
                                           const std::string& config_file_text = {}) {
    if (!tls) return std::make_unique<RedisServer>(std::move(extra), config_file_text);
    extra.insert(extra.end(), {"--tls-replication", "yes"});
    return std::make_unique<RedisServer>(*tls, std::move(extra), config_file_text);
}

constexpr int fast_hello_ms = 250;

void debug(const RedisServer& sentinel, const std::vector<std::string>& settings) {
    std::vector<std::string> command{"SENTINEL", "DEBUG"};
    command.insert(command.end(), settings.begin(), settings.end());
    auto paced = SyncRedis(sentinel.port()).command(command);
    if (paced->type == REDIS_REPLY_ERROR)
        throw std::runtime_error("SentinelGroup: SENTINEL DEBUG refused: " + std::string(paced->str));
}

}  // namespace

SentinelGroup::SentinelGroup(std::string master_name, std::vector<std::string> server_extra,
                             std::optional<TlsServer> tls)
    : name_(std::move(master_name)), tls_(tls.has_value()) {
    // Diskless sync waits 5 s by default for more replicas to share the transfer.
    server_extra.insert(server_extra.end(), {"--repl-diskless-sync-delay", "0"});
    // Each data node has a config file, and its replicaof is there, not on the
    // command line (which would override the file): the sentinels' CONFIG
    // REWRITE then keeps the role they gave it across a restart.
    const std::string node_conf = "# SentinelGroup data node; the sentinels rewrite this file\n";
    nodes.push_back(start_process(tls, server_extra, node_conf));
    // With TLS the replica, the sentinels and the clients reach the master on its TLS port.
    const std::string master_port = std::to_string(tls ? nodes[0]->tls_port() : nodes[0]->port());
    nodes.push_back(start_process(tls, server_extra, node_conf + "replicaof 127.0.0.1 " + master_port + "\n"));
    wait_for_replicas(nodes[0]->port(), 1);
    for (int i = 0; i < 3; ++i) {
        // Two sentinels notice a dead master after 1 s; the third only after
        // 3 s, so it never runs for leader against them and its vote always
        // decides: three candidates at once split the vote, and the next try
        // waits 2 x failover-timeout (6 s).
        const std::string conf = "sentinel monitor " + name_ + " 127.0.0.1 " + master_port + " 2\n" +
                                 "sentinel down-after-milliseconds " + name_ + (i < 2 ? " 1000\n" : " 3000\n") +
                                 "sentinel failover-timeout " + name_ + " 3000\n" +
                                 "sentinel parallel-syncs " + name_ + " 1\n";
        sentinels.push_back(start_process(tls, {"--sentinel"}, conf));
        // Sentinel's own pace, for a test: hellos every 250 ms (default 2 s),
        // so sentinels agree on a new master sooner and turn a returning old
        // master into a replica after 1 s (4 hello periods; default 8 s);
        // INFO every 500 ms (default 10 s), so they see it return at once.
        debug(*sentinels.back(), {"publish-period", std::to_string(fast_hello_ms), "info-period", "500"});
    }
    // Until then a failover cannot happen: no quorum, or nothing to promote.
    wait_until_sentinels_agree();
}

void SentinelGroup::production_pace(bool production, std::size_t from) {
    for (std::size_t i = from; i < sentinels.size(); ++i)
        debug(*sentinels[i], {"publish-period", production ? "2000" : std::to_string(fast_hello_ms)});
}

void SentinelGroup::keep_logs(const std::string& to) const {
    std::filesystem::create_directories(to);
    auto copy = [&to](const RedisServer& process, const std::string& as) {
        std::error_code ignored;  // a log not written yet: nothing to keep
        std::filesystem::copy_file(process.dir() + "/redis.log", to + "/" + as + "-" + std::to_string(process.port()) + ".log",
                                   std::filesystem::copy_options::overwrite_existing, ignored);
    };
    for (const auto& node : nodes) copy(*node, "node");
    for (const auto& sentinel : sentinels) copy(*sentinel, "sentinel");
}

std::string SentinelGroup::url() const {
    std::string hosts;
    for (const auto& s : sentinels)
        hosts += (hosts.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(tls_ ? s->tls_port() : s->port());
    return (tls_ ? "rediss-sentinel://" : "redis-sentinel://") + hosts + "#" + name_;
}

std::uint16_t SentinelGroup::plain_port(std::uint16_t named) const {
    for (const auto& node : nodes)
        if ((tls_ ? node->tls_port() : node->port()) == named) return node->port();
    throw std::runtime_error("SentinelGroup: the sentinels name port " + std::to_string(named) + ", no node of ours");
}

std::uint16_t SentinelGroup::named_port_of(std::uint16_t sentinel) const {
    SyncRedis s(sentinel);
    auto reply = s.command({"SENTINEL", "get-master-addr-by-name", name_});
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2) throw std::runtime_error("no master");
    return plain_port(static_cast<std::uint16_t>(std::stoi(reply->element[1]->str)));
}

std::uint16_t SentinelGroup::master_port() const {
    for (const auto& s : sentinels) {
        if (!s->answers()) continue;
        try {
            return named_port_of(s->port());
        } catch (const std::exception&) {
        }
    }
    throw std::runtime_error("SentinelGroup: no sentinel names master " + name_);
}

RedisServer& SentinelGroup::master() {
    const auto port = master_port();
    return nodes[0]->port() == port ? *nodes[0] : *nodes[1];
}

RedisServer& SentinelGroup::replica() {
    const auto port = master_port();
    return nodes[0]->port() == port ? *nodes[1] : *nodes[0];
}

std::uint16_t SentinelGroup::failover(std::chrono::seconds within, std::size_t through) {
    const auto old_port = master_port();
    const auto deadline = Clock::now() + within;
    const auto left = [&] {
        return std::max(std::chrono::seconds(1),
                        std::chrono::duration_cast<std::chrono::seconds>(deadline - Clock::now()));
    };
    // A manual failover the sentinel gives up (on a loaded machine the promoted
    // replica may not confirm within failover-timeout, 3 s) is not tried again
    // by the sentinel: ask again once that one has surely ended, unless the
    // sentinel asked already names a new master (then the others follow).
    constexpr auto one_try = std::chrono::seconds(10);
    const auto names_old_master = [&] {
        try {
            return named_port_of(sentinels.at(through)->port()) == old_port;
        } catch (const std::exception&) {
            return true;  // not answering: asking again waits for it
        }
    };
    for (bool ask = true;; ask = names_old_master()) {
        // -NOGOODSLAVE until the sentinel has seen the replica, -INPROG while one runs: ask again.
        if (ask)
            wait_until(
                [&] {
                    return SyncRedis(sentinels.at(through)->port()).command({"SENTINEL", "FAILOVER", name_})->type !=
                           REDIS_REPLY_ERROR;
                },
                left(), "SENTINEL FAILOVER " + name_ + " was refused");
        try {
            return wait_for_new_master(old_port, std::min(one_try, left()));
        } catch (const std::runtime_error&) {
            if (Clock::now() + std::chrono::seconds(1) >= deadline) throw;
        }
    }
}

std::uint16_t SentinelGroup::wait_for_new_master(std::uint16_t old_port, std::chrono::seconds within) {
    std::uint16_t now = 0;
    // Once seen off the old port, the master may come back to it: a freshly
    // promoted master stalled past down-after (1 s; a fork for its new replica's
    // full sync, under ASan on a loaded machine) is failed over again, to the
    // deposed one, which is a replica by then. That is a failover too.
    bool moved = false;
    wait_until(
        [&] {
            for (const auto& s : sentinels) {
                if (!s->answers()) continue;
                if (named_port_of(s->port()) == old_port && !moved) return false;
            }
            now = master_port();
            moved = moved || now != old_port;
            SyncRedis node(now);
            auto role = node.command({"ROLE"});
            return role->type == REDIS_REPLY_ARRAY && std::string(role->element[0]->str) == "master";
        },
        within, "the sentinels did not move master " + name_ + " off port " + std::to_string(old_port));
    return now;
}

void SentinelGroup::wait_until_sentinels_agree(std::chrono::seconds within) {
    wait_until(
        [&] {
            for (const auto& s : sentinels) {
                SyncRedis sentinel(s->port());
                auto reply = sentinel.command({"SENTINEL", "MASTER", name_});
                int known = 0;  // the other two sentinels and the replica
                for (std::size_t i = 0; i + 1 < reply->elements; i += 2) {
                    const std::string field = reply->element[i]->str;
                    if (field == "num-other-sentinels") known += std::stoi(reply->element[i + 1]->str) >= 2;
                    if (field == "num-slaves") known += std::stoi(reply->element[i + 1]->str) >= 1;
                }
                if (known < 2) return false;
            }
            return true;
        },
        within, "the sentinels of " + name_ + " did not find each other and the replica");
}

void SentinelGroup::wait_for_replicas(std::uint16_t master_port, int count, std::chrono::seconds within) {
    wait_until(
        [&] {
            SyncRedis master(master_port);
            auto role = master.command({"ROLE"});
            if (role->type != REDIS_REPLY_ARRAY || role->elements < 3 ||
                static_cast<int>(role->element[2]->elements) < count)
                return false;
            // Online is not yet acknowledging: wait for an acknowledged write.
            master.command({"SET", "holdfast:fixture:probe", "1"});
            const bool acked = master.integer({"WAIT", std::to_string(count), "1000"}) >= count;
            master.command({"DEL", "holdfast:fixture:probe"});
            return acked;
        },
        within, "the master on port " + std::to_string(master_port) + " has no " + std::to_string(count) +
                    " replica(s) online");
}

}  // namespace holdfast::support
