// Connection's view of the server's role (ROLE): whether it is a master, how
// many replicas it has, and leaving a demoted master; and of what its user
// may run (ACL GETUSER). Apart from the socket and write path in connection.cpp.
#include "transport/command.hpp"
#include "transport/connection.hpp"

namespace holdfast::detail {

// Every few seconds: replicas come and go, a master may be demoted, and an
// operator may change the user's rights (taken away, the scripts check them
// again within this interval, or at the first refusal; given back, they stop).
void Connection::refresh_role(Clock::time_point now) {
    constexpr auto every = std::chrono::seconds(2);
    // Not on a subscribed connection, where ROLE is refused.
    if (is_push || state_ != State::ready || now - role_checked_ < every) return;
    role_checked_ = now;
    if (may_ask_rights_) ask_rights();
    if (config_.topology != Topology::sentinel && config_.replica_sync == ReplicaSync::off) return;
    submit(encode_command({"ROLE"}), [self = shared_from_this(), generation = generation_](Failure error, Reply reply) {
        if (!error && generation == self->generation_) self->on_role(reply);
    });
}

void Connection::ask_rights() {
    may_ask_rights_ = true;
    submit(encode_command({"ACL", "GETUSER", acl_user()}),
           [self = shared_from_this(), generation = generation_](Failure error, Reply reply) {
               if (!error && generation == self->generation_) self->on_rights(reply);
           });
}

// Part of the handshake: one more reply to wait for before ready.
void Connection::ask_rights_before_ready() {
    may_ask_rights_ = true;
    ++handshake_replies_;
    bool must_drain;
    std::uint64_t epoch;
    {
        std::lock_guard lock(mutex_);
        must_drain = enqueue_locked(encode_command({"ACL", "GETUSER", acl_user()}),
                                    [self = shared_from_this(), generation = generation_](Failure error, Reply reply) {
                                        if (error || generation != self->generation_) return;
                                        self->on_rights(reply);
                                        if (--self->handshake_replies_ == 0) self->became_ready();
                                    },
                                    Clock::now());
        epoch = epoch_;
    }
    if (must_drain) drain(epoch);
}

std::string Connection::acl_user() const { return config_.username.empty() ? "default" : config_.username; }

// ACL GETUSER's flat list of fields and values: everything is every command
// (+@all), every key (~*) and every channel (&*). Anything else, a refusal
// (an ACL without acl|getuser) or an unknown shape: the rights are checked.
void Connection::on_rights(const Reply& reply) {
    std::string commands, keys, channels;
    for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
        const std::string& field = reply.elements[i].str;
        const std::string& value = reply.elements[i + 1].str;
        if (field == "commands") commands = value;
        else if (field == "keys") keys = value;
        else if (field == "channels") channels = value;
    }
    if (!reply.is_array()) may_ask_rights_ = false;  // refused: asking again would fill ACL LOG
    const bool unrestricted = reply.is_array() && commands == "+@all" && keys == "~*" && channels == "&*";
    user_unrestricted_.store(unrestricted, std::memory_order_relaxed);
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
