#include "sweep.hpp"

#include "group_layout.hpp"
#include "history.hpp"
#include "sync_redis.hpp"
#include "targets.hpp"

namespace holdfast::check {
namespace {

// A permit-expirable semaphore's score for a permit whose lease never ends
// (Redisson's, src/semaphore/expirable_acquire.lua's ARGV[4]).
constexpr const char* never = "922337203685477";

std::string text(const redisReply* r) { return r && r->str ? std::string(r->str, r->len) : std::string(); }

std::vector<std::string> strings(const redisReply* reply) {
    std::vector<std::string> items;
    for (std::size_t i = 0; reply->type == REDIS_REPLY_ARRAY && i < reply->elements; ++i)
        items.push_back(text(reply->element[i]));
    return items;
}

// A group lock's holds at the server's time (its hash and its clock read
// apart: nobody writes after the run).
std::vector<std::string> group_holds_of(support::SyncRedis& node, const std::string& key) {
    const std::vector<std::string> time = strings(node.command({"TIME"}).get());
    if (time.size() != 2) return {};
    const std::int64_t now_ms = std::stoll(time[0]) * 1000 + std::stoll(time[1]) / 1000;
    return group_holds(strings(node.command({"HGETALL", key}).get()), now_ms, group_value_names());
}

// One key: its type, expiry and contents.
SweptKey read_key(support::SyncRedis& node, int port, const std::string& key, bool group) {
    SweptKey k;
    k.port = port;
    k.key = key;
    k.type = text(node.command({"TYPE", key}).get());
    k.pttl = node.integer({"PTTL", key});
    if (k.type == "string") {
        k.value = node.string({"GET", key});
    } else if (k.type == "hash" && group) {
        k.fields = group_holds_of(node, key);
    } else if (k.type == "hash") {
        for (const std::string& field : strings(node.command({"HKEYS", key}).get()))
            if (field != "mode") k.fields.push_back(field);
    } else if (k.type == "zset") {
        k.members = node.integer({"ZCARD", key});
        k.unleased = node.integer({"ZCOUNT", key, never, "+inf"});
    } else if (k.type == "list") {
        k.members = node.integer({"LLEN", key});
    }
    return k;
}

}  // namespace

void sweep(Deployment& deployment, bool group, const std::string& path) {
    HistoryWriter log(path);
    for (const std::uint16_t port : deployment.data_ports()) {
        try {
            support::SyncRedis node(port);
            node.set_timeout(std::chrono::seconds(1));
            const auto role = node.command({"ROLE"});
            if (role->type != REDIS_REPLY_ARRAY || role->elements == 0 || text(role->element[0]) != "master") continue;
            std::string cursor = "0";
            do {
                const auto page = node.command({"SCAN", cursor, "COUNT", "1000"});
                if (page->type != REDIS_REPLY_ARRAY || page->elements != 2) break;
                cursor = text(page->element[0]);
                for (std::size_t i = 0; i < page->element[1]->elements; ++i)
                    log.write(read_key(node, port, text(page->element[1]->element[i]), group));
            } while (cursor != "0");
        } catch (const std::exception&) {  // down or not answering: nothing to read there
        }
    }
}

}  // namespace holdfast::check
