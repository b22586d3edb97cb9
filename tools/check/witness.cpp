#include "witness.hpp"

#include <map>
#include <memory>

#include "group_layout.hpp"
#include "holdfast_scripts.hpp"
#include "targets.hpp"
#include "sync_redis.hpp"

namespace holdfast::check {

Witness::Witness(std::vector<std::uint16_t> ports, bool cluster, bool group, int locks, Duration every,
                 const std::string& path)
    : ports_(std::move(ports)),
      cluster_(cluster),
      group_(group),
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
    const auto names = group_value_names();
    while (!stop.stop_requested()) {
        const Nanos round = now_ns();
        for (const std::uint16_t port : ports_) {
            auto& node = nodes[port];
            try {
                if (!node) {
                    node = std::make_unique<support::SyncRedis>(port);
                    // A paused node (a replica, the server) must not hold up the others' reads.
                    node->set_timeout(std::max(every_, Duration(50)));
                }
                const auto role = node->command({"ROLE"});
                if (role->type != REDIS_REPLY_ARRAY || role->elements == 0 ||
                    std::string(role->element[0]->str, role->element[0]->len) != "master")
                    continue;
                for (int lock = 0; lock < locks_; ++lock) {
                    if (cluster_) node->command({"ASKING"});  // applies to the next command only
                    Sample sample;
                    sample.time = now_ns(), sample.port = port, sample.lock = lock;
                    const auto read =
                        node->command({"EVAL", check_scripts::check_witness_read.body, "2", lock_name(lock),
                                       "{" + lock_name(lock) + "}:timeout", group_ ? "group" : ""});
                    sample.answered = now_ns();
                    if (read->type != REDIS_REPLY_ARRAY || read->elements < 4) continue;  // MOVED, ASK: not this node's
                    sample.type.assign(read->element[0]->str, read->element[0]->len);
                    sample.pttl = read->element[1]->integer;
                    sample.free = read->element[2]->integer;
                    sample.held = read->element[3]->integer;
                    for (std::size_t i = 4; i < read->elements; ++i)
                        sample.fields.emplace_back(read->element[i]->str, read->element[i]->len);
                    if (group_ && sample.type == "hash" && !sample.fields.empty()) {  // the time, then HGETALL
                        const std::int64_t now_ms = std::stoll(sample.fields.front());
                        sample.fields = group_holds({sample.fields.begin() + 1, sample.fields.end()}, now_ms, names);
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
