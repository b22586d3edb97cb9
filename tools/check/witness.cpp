#include "witness.hpp"

#include <map>
#include <memory>

#include "sync_redis.hpp"

namespace holdfast::check {

Witness::Witness(std::vector<std::uint16_t> ports, bool cluster, int locks, Duration every, const std::string& path)
    : ports_(std::move(ports)),
      cluster_(cluster),
      locks_(locks),
      every_(every),
      log_(path),
      thread_([this](std::stop_token stop) { run(stop); }) {}

Witness::~Witness() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
}

void Witness::run(std::stop_token stop) {
    std::map<std::uint16_t, std::unique_ptr<support::SyncRedis>> nodes;
    while (!stop.stop_requested()) {
        const Nanos round = now_ns();
        for (const std::uint16_t port : ports_) {
            auto& node = nodes[port];
            try {
                if (!node) node = std::make_unique<support::SyncRedis>(port);
                const auto role = node->command({"ROLE"});
                if (role->type != REDIS_REPLY_ARRAY || role->elements == 0 ||
                    std::string(role->element[0]->str, role->element[0]->len) != "master")
                    continue;
                for (int lock = 0; lock < locks_; ++lock) {
                    if (cluster_) node->command({"ASKING"});  // applies to the next command only
                    Sample sample{now_ns(), 0, port, lock, {}};
                    const auto hash = node->command({"HGETALL", lock_name(lock)});
                    sample.answered = now_ns();
                    if (hash->type != REDIS_REPLY_ARRAY) continue;  // MOVED, ASK: not this node's
                    for (std::size_t i = 0; i + 1 < hash->elements; i += 2) {
                        std::string field(hash->element[i]->str, hash->element[i]->len);
                        if (field != "mode") sample.fields.push_back(std::move(field));
                    }
                    log_.write(sample);
                }
            } catch (const std::exception&) {  // down or restarting: try again next round
                node.reset();
            }
        }
        const Nanos next = round + to_ns(every_);
        if (const Nanos left = next - now_ns(); left > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(left));
    }
}

}  // namespace holdfast::check
