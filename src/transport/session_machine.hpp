// A connection's session life as a state machine without I/O or clock: where
// to connect, connecting, TLS, the Redis handshake, ready, the backoff between
// attempts, stopped. Events in (what the socket, the timers, the locator and
// the handshake replies reported), actions out, as primitive/acquire_machine.hpp.
// The driver (Connection, transport/connection.cpp) carries the actions out in
// the order given; the writer, the reader and the reply timeouts are its own.
//
// Each attempt has a generation: events that answer an attempt carry the
// generation the driver read when it started the step (generation()), and one
// from an older attempt (a callback the driver could not cancel in time) is
// ignored.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

#include "holdfast/config.hpp"
#include "holdfast/errors.hpp"
#include "transport/reply.hpp"

namespace holdfast::detail {

class SessionMachine {
public:
    enum class State : std::uint8_t {
        idle,        ///< not started
        locating,    ///< asking where to connect (behind Sentinel: the master)
        connecting,  ///< resolving and connecting
        tls,         ///< TCP connected, TLS handshake under way
        handshake,   ///< the Redis handshake sent, replies due
        ready,       ///< commands may go out
        backoff,     ///< an attempt failed or the connection was lost: waiting to try again
        stopped,     ///< for good
    };

    /// The handshake's commands, in the order they are sent.
    enum class Step : std::uint8_t {
        auth = 1 << 0,          ///< AUTH
        select = 1 << 1,        ///< SELECT
        setname = 1 << 2,       ///< CLIENT SETNAME (cosmetic: a refusal is ignored)
        ping = 1 << 3,          ///< PING: the peer speaks RESP
        rights_probe = 1 << 4,  ///< EVAL_RO: may the user run ACL GETUSER? (1: yes); and what runs there
        rights = 1 << 5,        ///< ACL GETUSER, sent when the probe says yes
        role = 1 << 6,          ///< ROLE: a master? with how many replicas?
    };

    struct Options {
        bool locates = false;          ///< ask where to connect before each attempt (a sentinel's master)
        bool cluster_announced = false;  ///< `address` is what a cluster announced (CLUSTER SLOTS, a redirect)
        bool requires_master = false;  ///< ROLE other than master: fail and ask again (Topology::sentinel)
        bool tls = false;
        bool auth = false, select = false, setname = false, probes_rights = false, asks_role = false;
        bool tells_connected = false;  ///< tell_connected the first time ready (a connection for commands)
        ServerAddress address;  ///< where to connect when not located
        std::chrono::milliseconds connect_timeout{1000};
        std::chrono::milliseconds retry_interval{100};      ///< the first backoff, and again once ready
        std::chrono::milliseconds retry_interval_max{3000};  ///< the backoff doubles up to this
    };

    struct Action {
        enum class Kind : std::uint8_t {
            locate,                ///< ask the locator; it answers located() or locate_failed()
            connect,               ///< resolve and connect to address(); connected() or connect_failed()
            arm_connect_timer,     ///< Options::connect_timeout; fires as connect_timer_fired()
            cancel_connect_timer,  ///< connected (and TLS done): the timer is void
            start_tls,             ///< tls_done() or tls_failed()
            send_handshake,        ///< start reading, send `steps` in Step order; each reply is replied()
            send_rights,           ///< ACL GETUSER, one more handshake reply (Step::rights)
            replicas,              ///< the server reports `count` replicas (none: a replica, or unknown)
            tell_connected,        ///< Config::on_event: connected (the first time ready)
            tell_restored,         ///< Config::on_event: connection_restored
            become_ready,          ///< run on_ready, send the commands that waited
            close,                 ///< close the socket; keep the commands in flight for fail_in_flight
            tell_lost,             ///< Config::on_event: connection_lost, saying why()
            fail_in_flight,        ///< fail them with `code` (`established`: they may have run), run on_lost
            fail_waiting,          ///< fail every waiting command with `code`: retrying cannot help
            fail_one_attempt,      ///< fail the waiting commands that wanted this attempt only
            arm_backoff,           ///< wait `delay`, then retry_timer_fired()
            cancel_backoff,
        };
        Kind kind = Kind::close;
        errc code = errc::connection_lost;
        bool established = false;  ///< fail_in_flight: the handshake had begun
        std::uint8_t steps = 0;    ///< send_handshake: Step bits
        int count = 0;             ///< replicas
        std::chrono::milliseconds delay{0};
    };

    /// One event's actions, in order; fixed capacity, no allocation.
    class Actions {
    public:
        const Action* begin() const { return items_.data(); }
        const Action* end() const { return items_.data() + size_; }
        std::size_t size() const { return size_; }
        bool empty() const { return size_ == 0; }
        const Action& operator[](std::size_t i) const { return items_[i]; }
        void push(Action action) { items_[size_++] = action; }

    private:
        std::array<Action, 8> items_{};
        std::uint8_t size_ = 0;
    };

    SessionMachine() = default;
    explicit SessionMachine(Options options);

    Actions start();
    Actions located(std::uint64_t generation, ServerAddress address);
    /// The locator found no address; `code` auth_refused or tls_failed: asking again cannot help.
    Actions locate_failed(std::uint64_t generation, errc code, std::string why);
    Actions connected(std::uint64_t generation);
    /// Resolving or connecting failed (`what` happened).
    Actions connect_failed(std::uint64_t generation, std::string what);
    Actions connect_timer_fired(std::uint64_t generation);
    Actions tls_done(std::uint64_t generation);
    Actions tls_failed(std::uint64_t generation, std::string why, errc code);
    /// A handshake reply, or the reply of a ROLE sent while ready.
    Actions replied(std::uint64_t generation, Step step, const Reply& reply);
    /// The connection failed: the peer closed it, a read or write failed, no
    /// reply in time, a reply that is not RESP... (`code` for the commands in flight).
    Actions lost(std::uint64_t generation, std::string why, errc code = errc::connection_lost);
    Actions retry_timer_fired();
    /// A failover named `keep`: leave any other server, and end a backoff at once.
    Actions relocate(const ServerAddress& keep, std::string why);
    Actions stop();

    State state() const { return state_; }
    std::uint64_t generation() const { return generation_; }
    /// Where this attempt goes (or the last went): the locator's answer, or Options::address.
    const ServerAddress& address() const { return address_; }
    /// The last failure, as close, tell_lost and the fail actions say it.
    const std::string& why() const { return why_; }
    /// The backoff the next failure waits.
    std::chrono::milliseconds next_backoff() const { return backoff_; }
    /// `generation` is this attempt's and the machine is in `state`: a callback not yet stale.
    bool current(std::uint64_t generation, State state) const { return generation == generation_ && state_ == state; }

private:
    Actions attempt();
    Actions connect_to(ServerAddress address);
    Actions start_handshake();
    /// Ends the attempt or the connection: close, fail, back off (after `actions`).
    Actions fail(std::string why, errc code);
    Actions fail(std::string why, errc code, Actions actions);
    /// Behind a sentinel or in a cluster: what failed, with where the address came from.
    std::string unreachable(const std::string& what) const;

    Options options_;
    State state_ = State::idle;
    std::uint64_t generation_ = 0;
    ServerAddress address_;
    std::string why_;
    std::chrono::milliseconds backoff_{options_.retry_interval};
    int replies_due_ = 0;  // handshake
    bool lost_ = false;    // told connection_lost, not yet connection_restored
    bool connected_ = false;  // told connected: ready once
};

}  // namespace holdfast::detail
