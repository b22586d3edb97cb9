#include "transport/session_machine.hpp"

#include <algorithm>

namespace holdfast::detail {

namespace {

using Kind = SessionMachine::Action::Kind;
using State = SessionMachine::State;
using Step = SessionMachine::Step;

constexpr std::uint8_t bit(Step step) { return static_cast<std::uint8_t>(step); }

// Retrying cannot fix refused credentials or certificates, nor a peer that
// does not speak RESP: the waiting commands fail now, not at their timeout.
bool permanent(errc code) {
    return code == errc::auth_refused || code == errc::tls_failed || code == errc::protocol_error;
}

}  // namespace

SessionMachine::SessionMachine(Options options) : options_(std::move(options)), backoff_(options_.retry_interval) {}

SessionMachine::Actions SessionMachine::start() {
    if (state_ != State::idle) return {};
    return attempt();
}

SessionMachine::Actions SessionMachine::attempt() {
    ++generation_;
    if (!options_.locates) return connect_to(options_.address);
    state_ = State::locating;
    Actions actions;
    actions.push({Kind::locate});  // last: the locator may answer at once
    return actions;
}

SessionMachine::Actions SessionMachine::located(std::uint64_t generation, ServerAddress address) {
    if (!current(generation, State::locating)) return {};
    return connect_to(std::move(address));
}

SessionMachine::Actions SessionMachine::locate_failed(std::uint64_t generation, errc code, std::string why) {
    if (!current(generation, State::locating)) return {};
    return fail(std::move(why), permanent(code) ? code : errc::connection_lost);
}

SessionMachine::Actions SessionMachine::connect_to(ServerAddress address) {
    address_ = std::move(address);
    state_ = State::connecting;
    Actions actions;
    actions.push({Kind::arm_connect_timer});  // covers the TLS handshake too: a plain server never answers it
    actions.push({Kind::connect});
    return actions;
}

SessionMachine::Actions SessionMachine::connected(std::uint64_t generation) {
    if (!current(generation, State::connecting)) return {};
    if (!options_.tls) return start_handshake();
    state_ = State::tls;
    Actions actions;
    actions.push({Kind::start_tls});
    return actions;
}

SessionMachine::Actions SessionMachine::connect_failed(std::uint64_t generation, std::string what) {
    if (!current(generation, State::connecting)) return {};
    return fail(unreachable(what), errc::connection_lost);
}

SessionMachine::Actions SessionMachine::connect_timer_fired(std::uint64_t generation) {
    if (generation != generation_) return {};
    const std::string after = std::to_string(options_.connect_timeout.count()) + " ms";
    if (state_ == State::connecting)
        return fail(unreachable("connect timed out after " + after), errc::connection_lost);
    if (state_ == State::tls)
        return fail("no answer to the TLS handshake within " + after +
                        "; is this a TLS port? (use redis:// for a plain server)",
                    errc::connection_lost);
    return {};
}

SessionMachine::Actions SessionMachine::tls_done(std::uint64_t generation) {
    if (!current(generation, State::tls)) return {};
    return start_handshake();
}

SessionMachine::Actions SessionMachine::tls_failed(std::uint64_t generation, std::string why, errc code) {
    if (!current(generation, State::tls)) return {};
    return fail(std::move(why), code);
}

// AUTH and SELECT when configured, and always a PING: the handshake proves the
// peer speaks RESP before any command is trusted to it.
SessionMachine::Actions SessionMachine::start_handshake() {
    state_ = State::handshake;
    std::uint8_t steps = bit(Step::ping);
    if (options_.auth) steps |= bit(Step::auth);
    if (options_.select) steps |= bit(Step::select);
    if (options_.setname) steps |= bit(Step::setname);
    if (options_.probes_rights) steps |= bit(Step::rights_probe);
    if (options_.asks_role) steps |= bit(Step::role);
    replies_due_ = 0;
    for (std::uint8_t s = steps; s != 0; s &= static_cast<std::uint8_t>(s - 1)) ++replies_due_;
    Actions actions;
    actions.push({Kind::cancel_connect_timer});
    Action send{Kind::send_handshake};
    send.steps = steps;
    actions.push(send);
    return actions;
}

SessionMachine::Actions SessionMachine::replied(std::uint64_t generation, Step step, const Reply& reply) {
    if (generation != generation_) return {};
    // ROLE also comes while ready (asked every few seconds): a demoted master is left.
    const bool handshake = state_ == State::handshake;
    if (!handshake && !(state_ == State::ready && step == Step::role)) return {};
    Actions actions;
    switch (step) {
        case Step::auth:
            if (reply.is_error())
                return fail("AUTH refused (" + reply.str + "); check the user name and password in the URL",
                            errc::auth_refused);
            break;
        case Step::select:
        case Step::ping:
            // A refused database (or a server wanting AUTH): retrying cannot help.
            if (reply.is_error())
                return fail("the server refused the connection setup (" + reply.str +
                                "); check the password and database number in the URL",
                            errc::auth_refused);
            break;
        case Step::setname:  // cosmetic: an ACL without +client|setname leaves it unnamed
        case Step::rights:   // the driver reads the rights; a refusal means they are checked
            break;
        case Step::rights_probe: {
            // {1 or 0, server name, version}; the driver reads what runs there.
            const Reply& may = reply.is_array() && !reply.elements.empty() ? reply.elements[0] : reply;
            if (may.is_integer() && may.integer == 1) {
                ++replies_due_;
                actions.push({Kind::send_rights});
            }
            break;
        }
        case Step::role: {
            // Refused (an ACL without ROLE): the replicas are unknown, and no master check.
            if (!reply.is_array() || reply.elements.empty()) break;
            const std::string& role = reply.elements[0].str;
            Action replicas{Kind::replicas};
            if (role == "master")
                replicas.count = reply.elements.size() >= 3 ? static_cast<int>(reply.elements[2].elements.size()) : 0;
            actions.push(replicas);
            if (role != "master" && options_.requires_master)
                return fail(address_.name() + " is a " + role + ", not the master; asking the sentinels again",
                            errc::connection_lost, actions);
            break;
        }
    }
    if (!handshake || --replies_due_ > 0) return actions;
    state_ = State::ready;
    backoff_ = options_.retry_interval;
    why_.clear();
    if (lost_) {
        lost_ = false;
        actions.push({Kind::tell_restored});
    } else if (!connected_ && options_.tells_connected) {
        actions.push({Kind::tell_connected});
    }
    connected_ = true;
    actions.push({Kind::become_ready});
    return actions;
}

SessionMachine::Actions SessionMachine::lost(std::uint64_t generation, std::string why, errc code) {
    if (generation != generation_) return {};
    return fail(std::move(why), code);
}

SessionMachine::Actions SessionMachine::fail(std::string why, errc code) { return fail(std::move(why), code, {}); }

SessionMachine::Actions SessionMachine::fail(std::string why, errc code, Actions actions) {
    if (state_ == State::stopped || state_ == State::backoff || state_ == State::idle) return actions;
    const bool established = state_ == State::ready || state_ == State::handshake;
    const bool was_ready = state_ == State::ready;
    why_ = std::move(why);
    state_ = State::backoff;
    ++generation_;  // every callback of the attempt is stale now
    actions.push({Kind::close});
    if (was_ready) {
        lost_ = true;
        actions.push({Kind::tell_lost});
    }
    Action in_flight{Kind::fail_in_flight, code};
    in_flight.established = established;
    actions.push(in_flight);
    actions.push({permanent(code) ? Kind::fail_waiting : Kind::fail_one_attempt, code});
    Action wait{Kind::arm_backoff};
    wait.delay = backoff_;
    backoff_ = std::min(backoff_ * 2, options_.retry_interval_max);
    actions.push(wait);
    return actions;
}

SessionMachine::Actions SessionMachine::retry_timer_fired() {
    if (state_ != State::backoff) return {};  // stale: relocate() went on before it fired
    return attempt();
}

SessionMachine::Actions SessionMachine::relocate(const ServerAddress& keep, std::string why) {
    if (address_ == keep || state_ == State::idle || state_ == State::stopped) return {};
    // Connected, or going, to another.
    if (state_ != State::backoff) return fail(std::move(why), errc::connection_lost);
    // Waiting out the backoff after failing to reach the old master: the
    // sentinels name the new one now, so go at once, not up to
    // retry_interval_max after the failover.
    Actions actions;
    actions.push({Kind::cancel_backoff});
    for (const Action& a : attempt()) actions.push(a);
    return actions;
}

// Not a loss to tell: the client is going away.
SessionMachine::Actions SessionMachine::stop() {
    if (state_ == State::stopped) return {};
    Actions actions;
    if (state_ != State::idle && state_ != State::backoff) {
        Action in_flight{Kind::fail_in_flight, errc::client_closed};
        in_flight.established = state_ == State::ready || state_ == State::handshake;
        ++generation_;
        actions.push({Kind::close});
        actions.push(in_flight);
    }
    state_ = State::stopped;
    actions.push({Kind::cancel_backoff});
    actions.push({Kind::fail_waiting, errc::client_closed});
    return actions;
}

std::string SessionMachine::unreachable(const std::string& what) const {
    if (options_.cluster_announced)
        return "the cluster announces " + address_.name() +
               " for this node (CLUSTER SLOTS, or a MOVED/ASK redirect): " + what +
               "; if that is not where this client reaches the node, check the nodes' cluster-announce-ip/"
               "cluster-announce-port (what a node announces itself as), or map it with Config::nat_map (nat_map= "
               "in the URL)";
    if (!options_.locates) return what;
    return "the sentinels give " + address_.name() + " for it: " + what +
           "; if that is not where this client reaches the master, check the address in the sentinels' `sentinel "
           "monitor` and the data nodes' replica-announce-ip/replica-announce-port (what a promoted replica is "
           "announced as), or map it with Config::nat_map (nat_map= in the URL)";
}

}  // namespace holdfast::detail
