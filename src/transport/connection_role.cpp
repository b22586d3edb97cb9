// Connection's view of the server's role (ROLE): whether it is a master, how
// many replicas it has, and leaving a demoted master. Apart from the socket
// and write path in connection.cpp.
#include "transport/command.hpp"
#include "transport/connection.hpp"

namespace holdfast::detail {

// Every few seconds: replicas come and go, and a master may be demoted.
void Connection::refresh_role(Clock::time_point now) {
    constexpr auto every = std::chrono::seconds(2);
    // Not on a subscribed connection, where ROLE is refused.
    if (is_push || state_ != State::ready || now - role_checked_ < every) return;
    if (config_.topology != Topology::sentinel && config_.replica_sync == ReplicaSync::off) return;
    role_checked_ = now;
    submit(encode_command({"ROLE"}), [self = shared_from_this(), generation = generation_](Failure error, Reply reply) {
        if (!error && generation == self->generation_) self->on_role(reply);
    });
}

bool Connection::on_role(const Reply& reply) {
    // Refused (an ACL without ROLE): no replica count, no master check.
    if (!reply.is_array() || reply.elements.empty()) return true;
    const std::string& role = reply.elements[0].str;
    if (role == "master") {
        const int replicas = reply.elements.size() >= 3 ? static_cast<int>(reply.elements[2].elements.size()) : 0;
        replicas_.store(replicas, std::memory_order_relaxed);
        if (replicas > 0) seen_replicas_.store(true, std::memory_order_relaxed);
        return true;
    }
    replicas_.store(0, std::memory_order_relaxed);
    if (config_.topology != Topology::sentinel) return true;
    fail(address_.name() + " is a " + role + ", not the master; asking the sentinels again");
    return false;
}

void Connection::saw_replicas(int count) {
    if (count > 0) seen_replicas_.store(true, std::memory_order_relaxed);
    int known = replicas_.load(std::memory_order_relaxed);
    while (count > known && !replicas_.compare_exchange_weak(known, count, std::memory_order_relaxed)) {
    }
}

void Connection::drop_unless(const ServerAddress& keep, const std::string& why) {
    if (address_ == keep || state_ == State::idle || state_ == State::stopped) return;
    // Waiting out the backoff after failing to reach the old master: the
    // sentinels name the new one now, so go at once, not up to
    // retry_interval_max after the failover.
    if (state_ == State::backoff) {
        retry_timer_.cancel();
        return connect();
    }
    fail(why);  // connected, or connecting, to another
}

}  // namespace holdfast::detail
