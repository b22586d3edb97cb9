// The ACL nemeses: a worker's rights narrowed while it works (its channels
// taken away, or one command its scripts run), then given back. ACLs are per
// node: each change is made on every data node.
#include "nemesis.hpp"

#include <algorithm>
#include <thread>

#include "script_commands.hpp"
#include "sync_redis.hpp"

namespace holdfast::check {

void NemesisRunner::set_user(const std::string& user, const std::vector<std::string>& rules) {
    std::vector<std::string> command{"ACL", "SETUSER", user};
    command.insert(command.end(), rules.begin(), rules.end());
    for (support::RedisServer* node : deployment_.data_nodes()) {
        auto reply = support::SyncRedis(node->port()).command(command);
        if (reply->type == REDIS_REPLY_ERROR)
            throw std::runtime_error("nemesis: :" + std::to_string(node->port()) + " refused ACL SETUSER " + user +
                                     ": " + std::string(reply->str, reply->len));
    }
}

// A holder's channels taken away (its ACL user's, one per worker slot) while
// it is inside: its release is refused, so its hold must not be renewed and
// its lease must free the lock; its next acquires are refused up front, and
// its subscriptions dropped. Given back after 0.5-2 leases.
bool NemesisRunner::revoke_rights() {
    const int slot = any_holder();
    if (slot < 0) return false;
    const int lock = status_.slots[slot].holding.load();
    if (lock < 0) return false;
    const int worker = workers_.worker_in(slot);
    const std::string user = acl_user_of(slot);
    const Nanos start = now_ns();
    set_user(user, {"resetchannels"});
    std::this_thread::sleep_for(scaled(0.5, 2.0));
    set_user(user, {"allchannels"});
    const Nanos end = now_ns();
    log_.write(Fault{start, end, Nemesis::revoke_rights, worker, lock,
                     "ACL SETUSER " + user + " resetchannels for " + ms_text(end - start)});
    return true;
}

// One command the primitive's scripts run (each in turn, in an order drawn
// by the seed) taken from a worker's user, a holder's if one is inside within
// a lease, for 0.5-2 leases; then everything given back. Acquires, releases
// and renewals meet the refusal wherever in a script the command comes: a
// script that wrote before the refused command keeps those writes (a lock
// without expiry, a permit gone), unless it checked its rights first. A user
// allowed everything runs the trusted twins, unchecked, until its client asks
// for its rights again (every 2 s): there the server's refusal is all there is.
bool NemesisRunner::narrow_acl() {
    if (narrow_order_.empty()) {
        narrow_order_ = script_commands(primitive_).commands;
        std::shuffle(narrow_order_.begin(), narrow_order_.end(), random_);
    }
    const std::string command = narrow_order_[narrowed_++ % narrow_order_.size()];
    int slot = any_holder();
    const int lock = slot < 0 ? -1 : status_.slots[slot].holding.load();
    if (slot < 0) slot = std::uniform_int_distribution<int>(0, workers_.slots() - 1)(random_);
    const int worker = workers_.worker_in(slot);
    const std::string user = acl_user_of(slot);
    const Nanos start = now_ns();
    set_user(user, {"-" + command});
    std::this_thread::sleep_for(scaled(0.5, 2.0));
    set_user(user, {"+@all"});
    const Nanos end = now_ns();
    log_.write(Fault{start, end, Nemesis::narrow_acl, worker, lock,
                     "ACL SETUSER " + user + " -" + command + " for " + ms_text(end - start)});
    return true;
}

}  // namespace holdfast::check
