// The session machine on its own: events in, actions out, no server, no clock.
#include "transport/session_machine.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace holdfast::detail {
namespace {

using namespace std::chrono_literals;
using Machine = SessionMachine;
using Kind = Machine::Action::Kind;
using State = Machine::State;
using Step = Machine::Step;
using K = std::vector<Kind>;

K kinds(const Machine::Actions& actions) {
    K out;
    for (const auto& a : actions) out.push_back(a.kind);
    return out;
}

const Machine::Action* find(const Machine::Actions& actions, Kind kind) {
    for (const auto& a : actions)
        if (a.kind == kind) return &a;
    return nullptr;
}

std::uint8_t bits(std::initializer_list<Step> steps) {
    std::uint8_t out = 0;
    for (Step s : steps) out |= static_cast<std::uint8_t>(s);
    return out;
}

Reply status(const char* text) {
    Reply r;
    r.type = Reply::Type::status;
    r.str = text;
    return r;
}

Reply error_reply(const char* text) {
    Reply r;
    r.type = Reply::Type::error;
    r.str = text;
    return r;
}

Reply integer(long long value) {
    Reply r;
    r.type = Reply::Type::integer;
    r.integer = value;
    return r;
}

// ROLE's answer: a master with `replicas` replicas, or ["slave", ...].
Reply role(const char* name, int replicas = 0) {
    Reply r;
    r.type = Reply::Type::array;
    r.elements.push_back(status(name));
    if (std::string(name) == "master") {
        r.elements.push_back(integer(0));
        Reply list;
        list.type = Reply::Type::array;
        list.elements.resize(static_cast<std::size_t>(replicas));
        r.elements.push_back(list);
    }
    return r;
}

Machine::Options plain() {
    Machine::Options o;
    o.address = {"127.0.0.1", 7000};
    o.connect_timeout = 1000ms;
    o.retry_interval = 100ms;
    o.retry_interval_max = 300ms;
    return o;
}

Machine::Options behind_sentinel() {
    Machine::Options o = plain();
    o.locates = true;
    o.requires_master = true;
    o.asks_role = true;
    return o;
}

// Started and connected: the handshake sent.
Machine::Actions to_handshake(Machine& m) {
    m.start();
    if (m.state() == State::locating) m.located(m.generation(), {"127.0.0.1", 7001});
    auto actions = m.connected(m.generation());
    if (m.state() == State::tls) actions = m.tls_done(m.generation());
    EXPECT_EQ(m.state(), State::handshake);
    return actions;
}

// Each step the handshake sent answered as a healthy server does.
Machine::Actions answer_all(Machine& m, std::uint8_t steps) {
    Machine::Actions last;
    for (Step s : {Step::auth, Step::select, Step::setname, Step::ping, Step::rights_probe, Step::role}) {
        if ((steps & static_cast<std::uint8_t>(s)) == 0) continue;
        const Reply reply = s == Step::role ? role("master") : s == Step::rights_probe ? integer(0) : status("OK");
        last = m.replied(m.generation(), s, reply);
    }
    return last;
}

void to_ready(Machine& m) {
    const auto sent = to_handshake(m);
    answer_all(m, find(sent, Kind::send_handshake)->steps);
    ASSERT_EQ(m.state(), State::ready);
}

TEST(SessionMachine, APlainServerIsReadyAfterItsPingAndTheRightsProbe) {
    Machine::Options o = plain();
    o.probes_rights = true;
    Machine m(o);
    EXPECT_EQ(kinds(m.start()), (K{Kind::arm_connect_timer, Kind::connect}));
    EXPECT_EQ(m.state(), State::connecting);
    EXPECT_EQ(m.address(), (ServerAddress{"127.0.0.1", 7000}));
    const auto sent = m.connected(m.generation());
    EXPECT_EQ(kinds(sent), (K{Kind::cancel_connect_timer, Kind::send_handshake}));
    EXPECT_EQ(sent[1].steps, bits({Step::ping, Step::rights_probe}));
    EXPECT_TRUE(m.replied(m.generation(), Step::ping, status("PONG")).empty());
    EXPECT_EQ(m.state(), State::handshake);
    EXPECT_EQ(kinds(m.replied(m.generation(), Step::rights_probe, integer(0))), (K{Kind::become_ready}));
    EXPECT_EQ(m.state(), State::ready);
}

TEST(SessionMachine, AuthSelectTlsAndRoleEachTakeTheirTurn) {
    Machine::Options o = plain();
    o.auth = o.select = o.setname = o.tls = o.asks_role = true;
    Machine m(o);
    m.start();
    EXPECT_EQ(kinds(m.connected(m.generation())), (K{Kind::start_tls}));  // the connect timer covers TLS too
    EXPECT_EQ(m.state(), State::tls);
    const auto sent = m.tls_done(m.generation());
    EXPECT_EQ(kinds(sent), (K{Kind::cancel_connect_timer, Kind::send_handshake}));
    EXPECT_EQ(sent[1].steps, bits({Step::auth, Step::select, Step::setname, Step::ping, Step::role}));
    EXPECT_TRUE(m.replied(m.generation(), Step::auth, status("OK")).empty());
    EXPECT_TRUE(m.replied(m.generation(), Step::select, status("OK")).empty());
    // A refused CLIENT SETNAME is cosmetic.
    EXPECT_TRUE(m.replied(m.generation(), Step::setname, error_reply("NOPERM no setname")).empty());
    EXPECT_TRUE(m.replied(m.generation(), Step::ping, status("PONG")).empty());
    const auto ready = m.replied(m.generation(), Step::role, role("master", 2));
    EXPECT_EQ(kinds(ready), (K{Kind::replicas, Kind::become_ready}));
    EXPECT_EQ(ready[0].count, 2);
    EXPECT_EQ(m.state(), State::ready);
}

// A connection for commands tells the first time it is ready (the
// connected event), not again after a loss (that is connection_restored).
// The rights probe's answer also says what runs there: {1 or 0, name, version}.
TEST(SessionMachine, AConnectionForCommandsTellsItsFirstReadyOnce) {
    Machine::Options o = plain();
    o.probes_rights = o.tells_connected = true;
    Machine m(o);
    to_handshake(m);
    m.replied(m.generation(), Step::ping, status("PONG"));
    Reply probe;
    probe.type = Reply::Type::array;
    probe.elements = {integer(0), status("valkey"), status("8.0.1")};
    EXPECT_EQ(kinds(m.replied(m.generation(), Step::rights_probe, probe)),
              (K{Kind::tell_connected, Kind::become_ready}));
    m.lost(m.generation(), "closed");
    m.retry_timer_fired();
    m.connected(m.generation());
    m.replied(m.generation(), Step::ping, status("PONG"));
    probe.elements[0] = integer(1);  // yes: the rights are asked before ready
    EXPECT_EQ(kinds(m.replied(m.generation(), Step::rights_probe, probe)), (K{Kind::send_rights}));
    EXPECT_EQ(kinds(m.replied(m.generation(), Step::rights, error_reply("NOPERM"))),
              (K{Kind::tell_restored, Kind::become_ready}));
}

TEST(SessionMachine, WithoutTlsTheHandshakeFollowsTheConnect) {
    Machine::Options o = plain();
    o.asks_role = true;
    Machine m(o);
    m.start();
    const auto sent = m.connected(m.generation());
    EXPECT_EQ(m.state(), State::handshake);
    EXPECT_EQ(sent[1].steps, bits({Step::ping, Step::role}));  // no AUTH, SELECT, SETNAME unless configured
}

TEST(SessionMachine, ARightsProbeSayingYesAsksTheRightsBeforeReady) {
    Machine::Options o = plain();
    o.probes_rights = true;
    Machine m(o);
    to_handshake(m);
    m.replied(m.generation(), Step::ping, status("PONG"));
    EXPECT_EQ(kinds(m.replied(m.generation(), Step::rights_probe, integer(1))), (K{Kind::send_rights}));
    EXPECT_EQ(m.state(), State::handshake);  // one more reply due
    EXPECT_EQ(kinds(m.replied(m.generation(), Step::rights, error_reply("NOPERM"))), (K{Kind::become_ready}));
}

TEST(SessionMachine, RefusedCredentialsFailTheWaitingCommandsAtOnce) {
    Machine::Options o = plain();
    o.auth = true;
    Machine m(o);
    to_handshake(m);
    const auto actions = m.replied(m.generation(), Step::auth, error_reply("WRONGPASS invalid username-password pair"));
    EXPECT_EQ(kinds(actions), (K{Kind::close, Kind::fail_in_flight, Kind::fail_waiting, Kind::arm_backoff}));
    EXPECT_EQ(actions[1].code, errc::auth_refused);
    EXPECT_TRUE(actions[1].established);
    EXPECT_EQ(actions[2].code, errc::auth_refused);
    EXPECT_NE(m.why().find("AUTH refused (WRONGPASS"), std::string::npos) << m.why();
    EXPECT_NE(m.why().find("user name and password"), std::string::npos) << m.why();
    EXPECT_EQ(m.state(), State::backoff);
}

TEST(SessionMachine, ARefusedDatabaseFailsTheWaitingCommandsAtOnce) {
    Machine::Options o = plain();
    o.select = true;
    Machine m(o);
    to_handshake(m);
    const auto actions = m.replied(m.generation(), Step::select, error_reply("ERR DB index is out of range"));
    ASSERT_NE(find(actions, Kind::fail_waiting), nullptr);
    EXPECT_EQ(find(actions, Kind::fail_waiting)->code, errc::auth_refused);
    EXPECT_NE(m.why().find("refused the connection setup (ERR DB index"), std::string::npos) << m.why();
    EXPECT_NE(m.why().find("database number"), std::string::npos) << m.why();
}

TEST(SessionMachine, AReplicaNamedByTheSentinelsIsLeftAndTheSentinelsAskedAgain) {
    Machine m(behind_sentinel());
    EXPECT_EQ(kinds(m.start()), (K{Kind::locate}));
    EXPECT_EQ(m.state(), State::locating);
    EXPECT_EQ(kinds(m.located(m.generation(), {"10.0.0.2", 6380})), (K{Kind::arm_connect_timer, Kind::connect}));
    EXPECT_EQ(m.address(), (ServerAddress{"10.0.0.2", 6380}));
    m.connected(m.generation());
    m.replied(m.generation(), Step::ping, status("PONG"));
    const auto actions = m.replied(m.generation(), Step::role, role("slave"));
    EXPECT_EQ(kinds(actions),
              (K{Kind::replicas, Kind::close, Kind::fail_in_flight, Kind::fail_one_attempt, Kind::arm_backoff}));
    EXPECT_EQ(actions[0].count, 0);
    EXPECT_EQ(actions[2].code, errc::connection_lost);
    EXPECT_NE(m.why().find("10.0.0.2:6380 is a slave, not the master; asking the sentinels again"), std::string::npos)
        << m.why();
    EXPECT_EQ(kinds(m.retry_timer_fired()), (K{Kind::locate}));  // not the same address again
}

TEST(SessionMachine, AMasterDemotedWhileReadyIsLeft) {
    Machine m(behind_sentinel());
    to_ready(m);
    const auto actions = m.replied(m.generation(), Step::role, role("slave"));
    EXPECT_EQ(kinds(actions), (K{Kind::replicas, Kind::close, Kind::tell_lost, Kind::fail_in_flight,
                                 Kind::fail_one_attempt, Kind::arm_backoff}));
    EXPECT_EQ(m.state(), State::backoff);
}

TEST(SessionMachine, AReplicaServesWhenNoSentinelAsksForAMaster) {
    Machine::Options o = plain();
    o.asks_role = true;  // replica sync on a single server
    Machine m(o);
    to_handshake(m);
    m.replied(m.generation(), Step::ping, status("PONG"));
    const auto actions = m.replied(m.generation(), Step::role, role("slave"));
    EXPECT_EQ(kinds(actions), (K{Kind::replicas, Kind::become_ready}));
    EXPECT_EQ(actions[0].count, 0);
}

TEST(SessionMachine, ARefusedRoleLeavesTheReplicasUnknownAndTheConnectionServes) {
    Machine m(behind_sentinel());
    to_handshake(m);
    m.replied(m.generation(), Step::ping, status("PONG"));
    const auto actions = m.replied(m.generation(), Step::role, error_reply("NOPERM this user has no permissions"));
    EXPECT_EQ(kinds(actions), (K{Kind::become_ready}));  // no replicas action: the count stays unknown
    EXPECT_EQ(m.state(), State::ready);
}

TEST(SessionMachine, AConnectTimeoutSaysWhetherItWasTheConnectOrTheTlsHandshake) {
    Machine connecting(plain());
    connecting.start();
    const auto actions = connecting.connect_timer_fired(connecting.generation());
    EXPECT_EQ(kinds(actions), (K{Kind::close, Kind::fail_in_flight, Kind::fail_one_attempt, Kind::arm_backoff}));
    EXPECT_FALSE(actions[1].established);
    EXPECT_EQ(connecting.why(), "connect timed out after 1000 ms");

    Machine::Options o = plain();
    o.tls = true;
    Machine tls(o);
    tls.start();
    tls.connected(tls.generation());
    EXPECT_FALSE(tls.connect_timer_fired(tls.generation()).empty());
    EXPECT_EQ(tls.why(), "no answer to the TLS handshake within 1000 ms; is this a TLS port? (use redis:// for a plain "
                         "server)");

    // Once the handshake is sent, the timer is void.
    Machine handshake(plain());
    to_handshake(handshake);
    EXPECT_TRUE(handshake.connect_timer_fired(handshake.generation()).empty());
    EXPECT_EQ(handshake.state(), State::handshake);
}

TEST(SessionMachine, BehindSentinelsAnUnreachableMasterIsNamedWithWhereTheAddressCameFrom) {
    Machine m(behind_sentinel());
    m.start();
    m.located(m.generation(), {"10.0.0.9", 6379});
    m.connect_failed(m.generation(), "cannot connect: Connection refused");
    EXPECT_EQ(m.why().rfind("the sentinels give 10.0.0.9:6379 for it: cannot connect: Connection refused; ", 0), 0u)
        << m.why();
    EXPECT_NE(m.why().find("Config::nat_map"), std::string::npos) << m.why();
}

TEST(SessionMachine, AnUnreachableClusterNodeIsNamedWithWhereTheAddressCameFrom) {
    Machine::Options o = plain();
    o.cluster_announced = true;
    Machine m(o);
    m.start();
    m.connect_failed(m.generation(), "cannot connect: Connection refused");
    EXPECT_EQ(m.why().rfind("the cluster announces 127.0.0.1:7000 for this node (CLUSTER SLOTS, or a MOVED/ASK "
                            "redirect): cannot connect: Connection refused; ",
                            0),
              0u)
        << m.why();
    EXPECT_NE(m.why().find("Config::nat_map"), std::string::npos) << m.why();
    // A timeout too; an address the user gave is named as it is.
    m.retry_timer_fired();
    m.connect_timer_fired(m.generation());
    EXPECT_EQ(m.why().rfind("the cluster announces 127.0.0.1:7000 for this node", 0), 0u) << m.why();
    Machine given(plain());
    given.start();
    given.connect_failed(given.generation(), "cannot connect: Connection refused");
    EXPECT_EQ(given.why(), "cannot connect: Connection refused");
}

TEST(SessionMachine, TheBackoffDoublesUpToItsCapAndStartsOverOnceReady) {
    Machine m(plain());  // 100 ms, at most 300 ms
    std::vector<long long> delays;
    m.start();
    for (int i = 0; i < 4; ++i) {
        const auto actions = m.connect_failed(m.generation(), "cannot connect: Connection refused");
        delays.push_back(find(actions, Kind::arm_backoff)->delay.count());
        m.retry_timer_fired();
    }
    EXPECT_EQ(delays, (std::vector<long long>{100, 200, 300, 300}));
    m.connected(m.generation());
    m.replied(m.generation(), Step::ping, status("PONG"));
    ASSERT_EQ(m.state(), State::ready);
    const auto lost = m.lost(m.generation(), "the server closed the connection");
    EXPECT_EQ(find(lost, Kind::arm_backoff)->delay, 100ms);
}

// Stopping fails what is in flight (closing a socket there is one) and what
// waits, as the client closing, not as a loss to tell.
TEST(SessionMachine, StopEndsEveryStateForGood) {
    const K active{Kind::close, Kind::fail_in_flight, Kind::cancel_backoff, Kind::fail_waiting};
    const K idle{Kind::cancel_backoff, Kind::fail_waiting};
    struct Case {
        const char* name;
        void (*to)(Machine&);
        K expected;
        bool established;
    };
    const Case cases[] = {
        {"idle", [](Machine&) {}, idle, false},
        {"locating", [](Machine& m) { m.start(); }, active, false},
        {"connecting",
         [](Machine& m) {
             m.start();
             m.located(m.generation(), {"h", 1});
         },
         active, false},
        {"tls",
         [](Machine& m) {
             m.start();
             m.located(m.generation(), {"h", 1});
             m.connected(m.generation());
         },
         active, false},
        {"handshake", [](Machine& m) { to_handshake(m); }, active, true},
        {"ready", [](Machine& m) { to_ready(m); }, active, true},
        {"backoff",
         [](Machine& m) {
             to_ready(m);
             m.lost(m.generation(), "gone");
         },
         idle, false},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        Machine::Options o = behind_sentinel();
        o.tls = true;
        Machine m(o);
        c.to(m);
        const auto generation = m.generation();
        const auto actions = m.stop();
        EXPECT_EQ(kinds(actions), c.expected);
        EXPECT_EQ(find(actions, Kind::fail_waiting)->code, errc::client_closed);
        if (const auto* in_flight = find(actions, Kind::fail_in_flight)) {
            EXPECT_EQ(in_flight->code, errc::client_closed);
            EXPECT_EQ(in_flight->established, c.established);
        }
        EXPECT_EQ(m.state(), State::stopped);
        // The driver's reads and writes of the closed socket are stale.
        if (find(actions, Kind::close)) {
            EXPECT_NE(m.generation(), generation);
        }
        // Nothing starts it again: not a timer, not a late answer, not a failover.
        EXPECT_TRUE(m.stop().empty());
        EXPECT_TRUE(m.start().empty());
        EXPECT_TRUE(m.retry_timer_fired().empty());
        EXPECT_TRUE(m.located(generation, {"h", 1}).empty());
        EXPECT_TRUE(m.connected(generation).empty());
        EXPECT_TRUE(m.connected(m.generation()).empty());
        EXPECT_TRUE(m.lost(m.generation(), "late").empty());
        EXPECT_TRUE(m.relocate({"other", 2}, "failover").empty());
        EXPECT_EQ(m.state(), State::stopped);
    }
}

// A callback the driver could not cancel in time answers an older attempt:
// it must not move the new one.
TEST(SessionMachine, ALateEventOfAnOlderAttemptIsIgnored) {
    Machine::Options o = plain();
    o.tls = true;
    Machine m(o);
    m.start();
    const auto first = m.generation();
    m.connect_failed(first, "cannot connect: Connection refused");
    m.retry_timer_fired();
    ASSERT_EQ(m.state(), State::connecting);
    ASSERT_NE(m.generation(), first);
    EXPECT_TRUE(m.connected(first).empty());
    EXPECT_TRUE(m.connect_failed(first, "late").empty());
    EXPECT_TRUE(m.connect_timer_fired(first).empty());
    EXPECT_EQ(m.state(), State::connecting);

    m.connected(m.generation());
    const auto in_tls = m.generation();
    EXPECT_TRUE(m.tls_failed(first, "late", errc::tls_failed).empty());
    m.tls_done(in_tls);
    ASSERT_EQ(m.state(), State::handshake);
    m.replied(m.generation(), Step::ping, status("PONG"));
    ASSERT_EQ(m.state(), State::ready);

    // A ROLE sent on the connection before this one answers: ignored.
    const auto old = m.generation();
    m.lost(old, "the server closed the connection");
    m.retry_timer_fired();
    m.connected(m.generation());
    m.tls_done(m.generation());
    ASSERT_EQ(m.state(), State::handshake);
    EXPECT_TRUE(m.replied(old, Step::ping, status("PONG")).empty());
    EXPECT_EQ(m.state(), State::handshake);
    EXPECT_TRUE(m.lost(old, "late").empty());
    EXPECT_EQ(m.state(), State::handshake);
}

TEST(SessionMachine, ALostConnectionIsToldOnceAndItsReturnOnce) {
    Machine m(plain());
    to_ready(m);
    const auto lost = m.lost(m.generation(), "the server closed the connection");
    EXPECT_EQ(kinds(lost), (K{Kind::close, Kind::tell_lost, Kind::fail_in_flight, Kind::fail_one_attempt,
                              Kind::arm_backoff}));
    EXPECT_EQ(lost[2].code, errc::connection_lost);
    EXPECT_TRUE(lost[2].established);
    EXPECT_EQ(m.why(), "the server closed the connection");
    // Already down: a second report changes nothing.
    EXPECT_TRUE(m.lost(m.generation(), "again").empty());
    // Attempts that fail before ready are not losses to tell.
    m.retry_timer_fired();
    EXPECT_EQ(find(m.connect_failed(m.generation(), "cannot connect"), Kind::tell_lost), nullptr);
    m.retry_timer_fired();
    m.connected(m.generation());
    EXPECT_EQ(kinds(m.replied(m.generation(), Step::ping, status("PONG"))),
              (K{Kind::tell_restored, Kind::become_ready}));
    // Told once: a later drop and return, each once again.
    m.lost(m.generation(), "closed");
    m.retry_timer_fired();
    m.connected(m.generation());
    EXPECT_EQ(kinds(m.replied(m.generation(), Step::ping, status("PONG"))),
              (K{Kind::tell_restored, Kind::become_ready}));
    // A first connection restores nothing.
    Machine fresh(plain());
    fresh.start();
    fresh.connected(fresh.generation());
    EXPECT_EQ(kinds(fresh.replied(fresh.generation(), Step::ping, status("PONG"))), (K{Kind::become_ready}));
}

TEST(SessionMachine, AReplyThatIsNotRespFailsTheWaitingCommandsToo) {
    Machine m(plain());
    to_handshake(m);
    const auto actions = m.lost(m.generation(), "Protocol error (is this a Redis server?)", errc::protocol_error);
    ASSERT_NE(find(actions, Kind::fail_waiting), nullptr);
    EXPECT_EQ(find(actions, Kind::fail_waiting)->code, errc::protocol_error);
    EXPECT_EQ(find(actions, Kind::fail_one_attempt), nullptr);
}

// The sentinels' own refusal (every one refused AUTH) cannot be fixed by
// asking again either; no answer from them can.
TEST(SessionMachine, ALocatorRefusingCredentialsFailsTheWaitingCommandsAtOnce) {
    Machine refused(behind_sentinel());
    refused.start();
    const auto actions = refused.locate_failed(refused.generation(), errc::auth_refused, "no sentinel gave ...");
    EXPECT_EQ(kinds(actions), (K{Kind::close, Kind::fail_in_flight, Kind::fail_waiting, Kind::arm_backoff}));
    EXPECT_EQ(actions[2].code, errc::auth_refused);

    Machine silent(behind_sentinel());
    silent.start();
    const auto waits = silent.locate_failed(silent.generation(), errc::not_connected, "no sentinel answered");
    EXPECT_EQ(kinds(waits), (K{Kind::close, Kind::fail_in_flight, Kind::fail_one_attempt, Kind::arm_backoff}));
    EXPECT_EQ(waits[1].code, errc::connection_lost);
}

TEST(SessionMachine, AFailoverMovesAConnectionOnlyIfItIsElsewhere) {
    Machine m(behind_sentinel());
    to_ready(m);  // at 127.0.0.1:7001
    EXPECT_TRUE(m.relocate({"127.0.0.1", 7001}, "failover").empty());
    EXPECT_EQ(m.state(), State::ready);
    const auto moved = m.relocate({"127.0.0.1", 7002}, "failover: moved");
    EXPECT_EQ(kinds(moved), (K{Kind::close, Kind::tell_lost, Kind::fail_in_flight, Kind::fail_one_attempt,
                               Kind::arm_backoff}));
    EXPECT_EQ(m.why(), "failover: moved");
    // In its backoff: asks again at once, not after the backoff.
    EXPECT_EQ(kinds(m.relocate({"127.0.0.1", 7002}, "failover")), (K{Kind::cancel_backoff, Kind::locate}));
    EXPECT_EQ(m.state(), State::locating);
}

}  // namespace
}  // namespace holdfast::detail
