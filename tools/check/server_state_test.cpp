// The checker's judgement of what the lock server held (server_state.cpp), of
// holds cut off by a narrowed ACL or a paused replica, of the topologies and
// mixes, and the narrow-acl nemesis's command lists against the scripts
// themselves, on hand-written histories.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "checker.hpp"
#include "script_commands.hpp"
#include "test_history.hpp"

namespace holdfast::check {
namespace {

RunResult check_history(const std::string& name, const History& history, Primitive primitive = Primitive::rlock,
                        std::int64_t permits = 1) {
    const std::string dir = fresh_dir(name);
    write_history(dir, history);
    RunFacts facts = one_lock_facts(dir);
    facts.primitive = primitive;
    facts.permits = permits;
    return check_run(facts);
}

// Worker 0 (owner c0:1) holds lock 0 from 1.010 s to 1.200 s, released ok.
std::vector<Line> one_hold() {
    return {{1000, 0, 1, "acquire", "invoke", 0, "c0:1"}, {1010, 0, 1, "acquire", "ok"},
            {1200, 0, 1, "release", "invoke"}, {1210, 0, 1, "release", "ok", 0}};
}

TEST(KeysWithoutExpiry, EachStretchOfTheWitnessReadingALockWithoutExpiryCountsOnce) {
    const RunResult r = check_history("unleased-reads", {one_hold(), {}, {{1050, 1051, "7000 0 hash -1 -1 0 c0:1"},
                                                                          {1100, 1101, "7000 0 hash -1 -1 0 c0:1"},
                                                                          {1150, 1151, "7000 0 hash 400 -1 0 c0:1"},
                                                                          {1180, 1181, "7000 0 hash -1 -1 0 c0:1"}}});
    EXPECT_EQ(r.keys_without_expiry, 2);
    ASSERT_FALSE(r.findings.empty());
    EXPECT_TRUE(r.findings[0].starts_with("key without expiry: check:lock:0 (a lock's hash, held by c0:1)"))
        << r.findings[0];
}

TEST(KeysWithoutExpiry, AfterTheRunOnlyKeysThatShouldCarryALeaseCount) {
    const RunResult r = check_history(
        "unleased-swept", {one_hold(), {}, {}, {"7000 check:lock:0 hash -1 - 0 0 c9:1",
                                                 "7000 redisson_lock_queue:{check:lock:0} list -1 - 2 0",
                                                 "7000 redisson_lock_token:{check:lock:0} string -1 12 0 0",
                                                 "7000 {check:lock:0}:c9:1:rwlock_timeout:1 string -1 1 0 0",
                                                 "7000 {check:lock:0}:timeout zset -1 - 2 1",
                                                 "7000 surprise string -1 x 0 0"}});
    // The hash, the read hold's key, the permit without a lease and the unknown key.
    EXPECT_EQ(r.keys_without_expiry, 4);
}

TEST(LostPermits, APermitExpirableSemaphoresFreeAndHeldMustAddUpAtEveryRead) {
    const RunResult r = check_history("listed-permits", {one_hold(), {}, {{1050, 1051, "7000 0 string -1 1 1"},
                                                                          {1100, 1101, "7000 0 string -1 0 1"},
                                                                          {1150, 1151, "7000 0 string -1 0 1"},
                                                                          {1250, 1251, "7000 0 string -1 2 0"}}},
                                      Primitive::expirable, 2);
    EXPECT_EQ(r.lost_permits.violations, 1);
    // ...and after the run: one free, none listed.
    const RunResult after = check_history(
        "listed-permits-after", {one_hold(), {}, {}, {"7000 check:lock:0 string -1 1 0 0"}}, Primitive::expirable, 2);
    EXPECT_EQ(after.lost_permits.violations, 1);
}

// Worker 0 releases its permit, worker 1's release is refused: one permit
// still taken, so one of the two is free after the run.
History two_permits(const std::string& free, bool unknown = false) {
    History h{{{1000, 0, 1, "acquire", "invoke", 0, "c0:1"}, {1010, 0, 1, "acquire", "ok"},
               {1200, 0, 1, "release", "invoke"}, {1210, 0, 1, "release", "ok"},
               {1000, 1, 1, "acquire", "invoke", 0, "c1:1"}, {1010, 1, 1, "acquire", "ok"},
               {1300, 1, 1, "release", "invoke"}, {1310, 1, 1, "release", "fail", -1, "NOPERM no incrby"}}};
    if (unknown) {
        h.lines.push_back({1400, 0, 2, "acquire", "invoke", 0, "c0:1"});
        h.lines.push_back({2400, 0, 2, "acquire", "unknown", -1, "timed out waiting for a reply"});
    }
    h.swept = {"7000 check:lock:0 string -1 " + free + " 0 0"};
    return h;
}

TEST(LostPermits, APlainSemaphoresCountAfterTheRunIsWhatTheWorkersLeft) {
    EXPECT_EQ(check_history("counted-ok", two_permits("1"), Primitive::semaphore, 2).violations(), 0);
    const RunResult lost = check_history("counted-lost", two_permits("0"), Primitive::semaphore, 2);
    EXPECT_EQ(lost.lost_permits.violations, 1);
    // A call of unknown outcome may have taken it.
    EXPECT_EQ(check_history("counted-unknown", two_permits("0", true), Primitive::semaphore, 2).violations(), 0);
    // A restart that lost the count explains it.
    History restarted = two_permits("0");
    restarted.faults = {fault(1500, 1600, "restart-volatile -1 -1 kill -9, back after 100ms")};
    const RunResult excused = check_history("counted-restart", restarted, Primitive::semaphore, 2);
    EXPECT_EQ(excused.lost_permits.violations, 0);
    EXPECT_EQ(excused.lost_permits.expected, 1);
}

// Worker 0 (c0:1) fails to take the lock at 1.000-1.010 s (refused); the
// witness reads its field at `read` ms; it tries again at 2.000 s.
RunResult check_refused_acquire(const std::string& name, long read) {
    return check_history(name, {{{1000, 0, 1, "acquire", "invoke", 0, "c0:1"},
                                 {1010, 0, 1, "acquire", "fail", -1, "NOPERM this user has no permissions"},
                                 {2000, 0, 2, "acquire", "invoke", 0, "c0:1"},
                                 {2010, 0, 2, "acquire", "fail", -1, "timed out"}},
                                {},
                                {{read, read + 1, "7000 0 hash -1 -1 0 c0:1"}}});
}

TEST(UnbelievedHolds, AFieldOfAnOwnerWhoseAcquireFailedIsAHoldNobodyBelieves) {
    const RunResult r = check_refused_acquire("unbelieved-during", 1600);
    EXPECT_EQ(r.unbelieved_holds.violations, 1);
    // Within a client timeout of the failure a hold may still be on its way back.
    EXPECT_EQ(check_refused_acquire("unbelieved-soon", 1300).unbelieved_holds.violations, 0);
}

TEST(UnbelievedHolds, AFieldLeftAfterTheRunByAWorkerThatReleasedOk) {
    History h{one_hold()};
    h.swept = {"7000 check:lock:0 hash 400 - 0 0 c0:1"};
    EXPECT_EQ(check_history("unbelieved-after", h).unbelieved_holds.violations, 1);
    // A release refused near the end leaves the hold to its lease, as the worker was told.
    h.lines = {{2700, 0, 1, "acquire", "invoke", 0, "c0:1"}, {2710, 0, 1, "acquire", "ok"},
               {2800, 0, 1, "release", "invoke"}, {2810, 0, 1, "release", "fail", -1, "NOPERM no del"}};
    EXPECT_EQ(check_history("believed-after", h).unbelieved_holds.violations, 0);
}

// A ReadWriteLock writer (c0:1) whose write release was refused keeps its
// `c0:1:write` field, as it was told, and reads meanwhile (a downgrade): its
// read release that returned ok leaves only the writer's field. Not a lost
// release: each side is judged by its own field; the read's, left, is one.
TEST(LostRelease, AReadReleaseIsJudgedByTheReadersFieldNotTheWritersLeftBeside) {
    const auto rwlock = [](const std::string& name, const std::string& fields) {
        History h{{{1000, 0, 1, "acquire", "invoke", 0, "c0:1"}, {1010, 0, 1, "acquire", "ok"},
                   {1100, 0, 1, "release", "invoke"}, {1110, 0, 1, "release", "fail", -1, "NOPERM no hlen"},
                   {1200, 0, 2, "acquire", "invoke", 0, "c0:1", "shared"}, {1210, 0, 2, "acquire", "ok", -1, {}, "shared"},
                   {1300, 0, 2, "release", "invoke", -1, {}, "shared"}, {1310, 0, 2, "release", "ok", 0, {}, "shared"}}};
        h.reads = {{1350, 1351, "7000 0 hash 400 -1 0 " + fields}};
        return check_history(name, h, Primitive::rwlock);
    };
    EXPECT_EQ(rwlock("rw-writer-left", "c0:1:write").lost_releases.violations, 0);
    EXPECT_EQ(rwlock("rw-reader-left", "c0:1:write c0:1").lost_releases.violations, 1);
}

// Worker 0 holds lock 0 from 1.010 s; its release at 2.000-2.010 s is
// refused; the listener hears an unlock at `heard` ms. `other`: worker 1
// releases it meanwhile too.
RunResult check_unlock(const std::string& name, long heard, bool other = false) {
    History h{{{1000, 0, 1, "acquire", "invoke", 0, "c0:1"}, {1010, 0, 1, "acquire", "ok"},
               {2000, 0, 1, "release", "invoke"}, {2010, 0, 1, "release", "fail", -1, "NOPERM no del"}}};
    if (other)
        h.lines.insert(h.lines.end(), {{1900, 1, 1, "acquire", "invoke", 0, "c1:1"}, {1950, 1, 1, "acquire", "ok"},
                                       {1990, 1, 1, "release", "invoke"}, {2020, 1, 1, "release", "ok"}});
    h.heard = {{heard, "7000 0 redisson_lock__channel:{check:lock:0} 0"}};
    return check_history(name, h);
}

TEST(FalseUnlocks, AnUnlockHeardWhileTheOnlyReleaseWasRefused) {
    const RunResult r = check_unlock("false-unlock", 2005);
    EXPECT_EQ(r.false_unlocks, 1);
    EXPECT_EQ(check_unlock("unlock-later", 2500).false_unlocks, 0);
    EXPECT_EQ(check_unlock("unlock-of-another", 2005, true).false_unlocks, 0);
}

// Worker 0 holds lock 0 from 1.010 s to 2.000 s, worker 1 from 1.600 s to
// 1.700 s, while `fault` (ms 1200-1500) cuts worker 0 off; worker 0 is told
// its hold is lost at `lost` ms (0: never).
RunResult check_cut_off(const std::string& name, const std::string& kind, long lost) {
    History h{{{1000, 0, 1, "acquire", "invoke", 0}, {1010, 0, 1, "acquire", "ok"},
               {2000, 0, 1, "release", "invoke"}, {2010, 0, 1, "release", "fail", -1, "does not hold it"},
               {1100, 1, 1, "acquire", "invoke", 0}, {1600, 1, 1, "acquire", "ok"},
               {1700, 1, 1, "release", "invoke"}, {1710, 1, 1, "release", "ok", 0}}};
    if (lost) h.lines.push_back({lost, 0, 1, "lost", "ok"});
    h.faults = {fault(1200, 1500, kind + " 0 0 narrowed")};
    return check_history(name, h);
}

TEST(CutOff, ANarrowedOrUnconfirmedHolderToldBeforeTheNextEntersIsNoViolation) {
    for (const std::string kind : {"narrow-acl", "pause-replica"}) {
        const RunResult told = check_cut_off("cut-told-" + kind, kind, 1550);
        EXPECT_EQ(told.told, 1) << kind;
        EXPECT_EQ(told.overlaps.violations, 0) << kind;
        const RunResult untold = check_cut_off("cut-untold-" + kind, kind, 0);
        EXPECT_EQ(untold.overlaps.violations, 1) << kind;
        ASSERT_FALSE(untold.findings.empty());
        EXPECT_TRUE(untold.findings[0].starts_with("untold overlap: two holders of check:lock:0 at once, the one cut "
                                                   "off (" + kind + ")")) << untold.findings[0];
    }
}

TEST(Topology, EachNemesisRunsWhereItCanAndAMixDrawsFromAllOfThem) {
    EXPECT_EQ(topology_of({{Nemesis::pause_replica}}, Topology::automatic), Topology::replicated);
    EXPECT_EQ(topology_of({{Nemesis::narrow_acl}}, Topology::automatic), Topology::server);
    EXPECT_EQ(topology_of({{}, true}, Topology::automatic), Topology::replicated);
    EXPECT_THROW(topology_of({{Nemesis::pause_replica}}, Topology::server), UsageError);
    EXPECT_THROW(topology_of({{Nemesis::kill_connections}}, Topology::sentinel), UsageError);
    const Scenario sentinel = mixed({{}, true}, Topology::sentinel, 1);
    for (Nemesis n : {Nemesis::pause_replica, Nemesis::narrow_acl, Nemesis::revoke_rights, Nemesis::kill_holder,
                      Nemesis::sentinel_failover, Nemesis::sentinel_hang})
        EXPECT_TRUE(sentinel.has(n)) << nemesis_name(n);
    EXPECT_FALSE(sentinel.has(Nemesis::kill_connections));
    EXPECT_EQ(sentinel.name(), "mix");
    for (std::uint64_t seed : {1, 2}) {
        const Scenario one = mixed({{}, true}, Topology::replicated, seed);
        EXPECT_NE(one.has(Nemesis::restart_persistent), one.has(Nemesis::restart_volatile)) << seed;
        EXPECT_TRUE(one.has(Nemesis::pause_replica) && one.has(Nemesis::partition_holder));
        EXPECT_FALSE(one.has(Nemesis::none) || one.has(Nemesis::sentinel_failover));
    }
}

// A script with its `-- include:` fragments pasted in, as cmake/EmbedScripts.cmake does.
std::string script_text(const std::string& path) {
    std::ifstream in(std::string(HOLDFAST_SOURCE_DIR) + "/src/" + path);
    EXPECT_TRUE(in) << path;
    std::string text, line;
    const std::string folder = path.substr(0, path.rfind('/') + 1);
    while (std::getline(in, line))
        text += line.starts_with("-- include: ") ? script_text(folder + line.substr(12)) : line + "\n";
    return text;
}

// Every command a script runs, outside its comments: redis.call('x'),
// redis.pcall('x'), side('x') and the rights it checks ({'x', ...}).
std::set<std::string> commands_in(const std::string& text) {
    std::set<std::string> found;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        const std::string code = line.substr(0, line.find("--"));
        for (const std::string opening : {"redis.call('", "redis.pcall('", "side('", "{'"})
            for (auto at = code.find(opening); at != std::string::npos; at = code.find(opening, at + 1)) {
                const auto from = at + opening.size(), to = code.find('\'', from);
                std::string name = code.substr(from, to == std::string::npos ? 0 : to - from);
                if (name.empty() || !std::all_of(name.begin(), name.end(), ::isalpha)) continue;
                if (opening == "{'" && code.compare(to, 2, "',") != 0) continue;  // a rights entry: {'x', ...}
                std::transform(name.begin(), name.end(), name.begin(), ::tolower);
                found.insert(name);
            }
    }
    return found;
}

// narrow-acl takes away exactly the commands the scripts run, and the publish
// command they are given: a script that starts running a new command fails
// this until the list has it.
TEST(NarrowAcl, EachPrimitivesCommandsAreThoseItsScriptsRun) {
    for (Primitive p : parse_primitives("all")) {
        std::set<std::string> found{"publish"};
        for (const std::string& script : script_commands(p).scripts) found.merge(commands_in(script_text(script)));
        const auto& listed = script_commands(p).commands;
        EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()), found) << primitive_name(p);
        EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end())) << primitive_name(p);
    }
}

// CTest's narrow-acl run names its primitives: a comma list, each spelling
// as alone; an unknown one is refused whole.
TEST(Primitives, ACommaListIsEachOfItsSpellings) {
    EXPECT_EQ(parse_primitives("rlock,nonreentrant-fair,group"),
              (std::vector<Primitive>{Primitive::rlock, Primitive::nonreentrant_fair, Primitive::group}));
    EXPECT_EQ(parse_primitives("both,fair"), (std::vector<Primitive>{Primitive::rlock, Primitive::fenced, Primitive::fair}));
    EXPECT_THROW(parse_primitives("rlock,spoon"), UsageError);
}

}  // namespace
}  // namespace holdfast::check
