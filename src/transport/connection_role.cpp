// Connection's view of the server's role (ROLE, read by the SessionMachine):
// how many replicas it has, asked again every few seconds; and of what its
// user may run (ACL GETUSER). Apart from the socket and write path in connection.cpp.
#include "transport/command.hpp"
#include "transport/connection.hpp"

namespace holdfast::detail {

// Every few seconds: replicas come and go, a master may be demoted, and an
// operator may change the user's rights (taken away, the scripts check them
// again within this interval, or at the first refusal; given back, they stop).
void Connection::refresh_role(Clock::time_point now) {
    constexpr auto every = std::chrono::seconds(2);
    // Not on a subscribed connection, where ROLE is refused.
    if (is_push || machine_.state() != State::ready || now - role_checked_ < every) return;
    role_checked_ = now;
    if (may_ask_rights_) ask_rights();
    if (config_.topology != Topology::sentinel && config_.replica_sync == ReplicaSync::off) return;
    submit(encode_command({"ROLE"}),
           [self = shared_from_this(), generation = machine_.generation()](Failure error, Reply reply) {
               if (!error) self->run(self->machine_.replied(generation, Step::role, reply));
           });
}

void Connection::ask_rights() {
    may_ask_rights_ = true;
    submit(encode_command({"ACL", "GETUSER", acl_user()}),
           [self = shared_from_this(), generation = machine_.generation()](Failure error, Reply reply) {
               if (!error && generation == self->machine_.generation()) self->on_rights(reply);
           });
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

std::string software_of(const Reply& probe) {
    if (!probe.is_array() || probe.elements.size() != 3) return {};
    const std::string& name = probe.elements[1].str;  // Valkey says so (SERVER_NAME); Redis has none
    const std::string& version = probe.elements[2].str;
    if (version.empty()) return {};
    if (name == "redis") return "Redis " + version;
    if (name == "valkey") return "Valkey " + version;
    return name + " " + version;
}

void Connection::on_server_info(const Reply& reply) {
    const std::string software = software_of(reply);
    std::lock_guard lock(mutex_);
    software_ = software;
}

std::pair<std::string, std::string> Connection::peer() const {
    std::lock_guard lock(mutex_);
    return {peer_, software_};
}

// ROLE's count (the machine reads the reply): 0 for a replica.
void Connection::count_replicas(int count) {
    replicas_.store(count, std::memory_order_relaxed);
    if (count > 0) seen_replicas_.store(true, std::memory_order_relaxed);
}

void Connection::saw_replicas(int count) {
    if (count > 0) seen_replicas_.store(true, std::memory_order_relaxed);
    int known = replicas_.load(std::memory_order_relaxed);
    while (count > known && !replicas_.compare_exchange_weak(known, count, std::memory_order_relaxed)) {
    }
}

void Connection::drop_unless(const ServerAddress& keep, const std::string& why) { run(machine_.relocate(keep, why)); }

}  // namespace holdfast::detail
