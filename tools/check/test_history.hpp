// Hand-written histories for the checker's own tests (checker_test.cpp,
// server_state_test.cpp): every file a run leaves, written from a few lines
// with times in ms after t0, and the one-lock run they describe.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "checker.hpp"

namespace holdfast::check {

inline constexpr Nanos ms = 1'000'000;
inline constexpr Nanos t0 = 1'000'000'000'000;

// An empty directory for one hand-written history.
inline std::string fresh_dir(const std::string& name) {
    const std::string dir = ::testing::TempDir() + "/holdfast-check-" + name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

// What the hand-written histories share: one lock, 500 ms lease and timeout, a 3 s run.
inline RunFacts one_lock_facts(const std::string& dir) {
    RunFacts facts;
    facts.dir = dir;
    facts.lease = Duration(500);
    facts.timeout = Duration(500);
    facts.locks = 1;
    facts.start = t0;
    facts.stop = t0 + 3000 * ms;
    facts.resources.resize(1);
    return facts;
}

// One line of a hand-written worker history (times in ms after t0).
struct Line {
    long t;
    int worker;
    long hold;
    const char* op;
    const char* phase;
    long value = -1;
    std::string message = {};
    const char* access = "exclusive";  // "shared": a ReadWriteLock's read side
};

// One read of the witness: sent and answered (ms after t0), then
// "PORT LOCK TYPE PTTL FREE HELD FIELD..." (history.hpp, Sample).
struct Read {
    long sent;
    long answered;
    std::string rest;
};

// Everything a one-lock run leaves but the resource: the workers' lines, the
// faults (nemesis.log lines), the witness's reads, the sweep's keys
// (sweep.log lines) and the messages the listener heard (ms after t0, then
// "PORT LOCK CHANNEL PAYLOAD").
struct History {
    std::vector<Line> lines;
    std::vector<std::string> faults = {};
    std::vector<Read> reads = {};
    std::vector<std::string> swept = {};
    std::vector<std::pair<long, std::string>> heard = {};
};

inline void write_history(const std::string& dir, const History& h) {
    std::ofstream witness(dir + "/witness.log");
    for (const Read& r : h.reads) witness << t0 + r.sent * ms << ' ' << t0 + r.answered * ms << ' ' << r.rest << '\n';
    for (const Line& l : h.lines)
        std::ofstream(dir + "/worker-" + std::to_string(l.worker) + ".log", std::ios::app)
            << t0 + l.t * ms << ' ' << l.worker << ' ' << l.op << ' ' << l.phase << " 0 " << l.hold << ' '
            << l.access << " -1 " << l.value << ' ' << l.message << '\n';
    std::ofstream log(dir + "/nemesis.log");
    for (const std::string& f : h.faults) log << f << '\n';
    std::ofstream sweep(dir + "/sweep.log");
    for (const std::string& k : h.swept) sweep << k << '\n';
    std::ofstream unlocks(dir + "/unlocks.log");
    for (const auto& [t, rest] : h.heard) unlocks << t0 + t * ms << ' ' << rest << '\n';
}

// Writes `lines` to their workers' files, `faults` (nemesis.log lines) to the
// fault log and `reads` to the witness's log, then checks the one-lock run.
inline RunResult check_lines(const std::string& name, const std::vector<Line>& lines,
                             const std::vector<std::string>& faults, const std::vector<Read>& reads = {},
                             bool replicas_synced = true) {
    const std::string dir = fresh_dir(name);
    write_history(dir, {lines, faults, reads});
    RunFacts facts = one_lock_facts(dir);
    facts.replicas_synced = replicas_synced;
    return check_run(facts);
}

// "START END kind worker lock detail", START and END in ms after t0.
inline std::string fault(long start, long end, const std::string& rest) {
    return std::to_string(t0 + start * ms) + ' ' + std::to_string(t0 + end * ms) + ' ' + rest;
}

}  // namespace holdfast::check
