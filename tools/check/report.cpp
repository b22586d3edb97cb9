#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace holdfast::check {
namespace {

std::string ms(Nanos ns) { return std::to_string((ns + 500'000) / 1'000'000) + "ms"; }

std::string tally(const Tally& t) {
    return std::to_string(t.violations) + (t.expected ? " (+" + std::to_string(t.expected) + " exp)" : "");
}

double percentile(std::vector<double> values, double p) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    return values[std::min(values.size() - 1, static_cast<std::size_t>(p * double(values.size())))];
}

std::string fixed(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", v);
    return text;
}

// Sums the runs of one row.
struct Row {
    std::string scenario;
    Topology topology = Topology::server;
    Primitive primitive = Primitive::rlock;
    int runs = 0;
    long attempts = 0, granted = 0, unknown = 0, lost_leases = 0, faults = 0, refused = 0, releases_in_migration = 0;
    bool migrates = false;  // the scenario moves slots
    Tally overlaps, lost_releases, lost_updates, stale_writes, token_order, fifo, lost_permits, unbelieved;
    long unleased = 0, false_unlocks = 0;
    long leaks = 0, renewed_after_release = 0, other = 0, slow_wakeups = 0, stalled_wakeups = 0, slow_regrants = 0, regrants = 0, untold = 0, told = 0;
    Nanos regrant_max = 0, unavailable = 0;
    std::vector<double> wakeups, resumes, failover_wakeups;
    std::vector<std::uint64_t> failing;

    void add(const RunResult& r) {
        ++runs;
        attempts += r.attempts;
        granted += r.granted;
        unknown += r.unknown;
        lost_leases += r.lost_leases;
        faults += r.faults;
        refused += r.refused;
        releases_in_migration += r.releases_in_migration;
        migrates = r.scenario.find("cluster-migrate-slot") != std::string::npos;
        for (auto [sum, one] : {std::pair{&overlaps, &r.overlaps}, {&lost_releases, &r.lost_releases},
                                {&lost_updates, &r.lost_updates},
                                {&stale_writes, &r.stale_writes}, {&token_order, &r.token_order},
                                {&fifo, &r.fifo}, {&lost_permits, &r.lost_permits},
                                {&unbelieved, &r.unbelieved_holds}}) {
            sum->violations += one->violations;
            sum->expected += one->expected;
        }
        leaks += r.leaked_holds;
        unleased += r.keys_without_expiry;
        false_unlocks += r.false_unlocks;
        renewed_after_release += r.renewed_after_release;
        untold += r.untold;
        told += r.told;
        other += r.integrity + r.worker_failures + r.stuck;
        slow_wakeups += r.slow_wakeups;
        stalled_wakeups += r.stalled_wakeups;
        slow_regrants += r.slow_regrants;
        regrants += r.regrants;
        regrant_max = std::max(regrant_max, r.regrant_max);
        unavailable = std::max(unavailable, r.longest_unavailable);
        wakeups.insert(wakeups.end(), r.wakeups_ms.begin(), r.wakeups_ms.end());
        resumes.insert(resumes.end(), r.resume_ms.begin(), r.resume_ms.end());
        failover_wakeups.insert(failover_wakeups.end(), r.failover_wakeups_ms.begin(), r.failover_wakeups_ms.end());
        if (r.violations() > 0) failing.push_back(r.seed);
    }
};

void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> width(rows.front().size(), 0);
    for (const auto& row : rows)
        for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    for (std::size_t r = 0; r < rows.size(); ++r) {
        out << '|';
        for (std::size_t c = 0; c < rows[r].size(); ++c)
            out << ' ' << rows[r][c] << std::string(width[c] - rows[r][c].size(), ' ') << " |";
        out << '\n';
        if (r == 0) {
            out << '|';
            for (std::size_t c = 0; c < width.size(); ++c) out << std::string(width[c] + 2, '-') << '|';
            out << '\n';
        }
    }
}

}  // namespace

std::string run_line(const RunResult& r) {
    const bool migrates = r.scenario.find("cluster-migrate-slot") != std::string::npos;
    return r.scenario + " " + primitive_name(r.primitive) + " seed " + std::to_string(r.seed) + " (" + r.schedule +
           " sections): " + std::to_string(r.granted) + " holds, " + std::to_string(r.faults) + " faults, " +
           (migrates ? std::to_string(r.releases_in_migration) + " releases inside a migration, " : "") +
           std::to_string(r.overlaps.expected) + " expected overlaps (" + std::to_string(r.untold) + " untold, " +
           std::to_string(r.told) + " told), " + std::to_string(r.violations()) + " violations";
}

std::string replay_command(const Options& o, const RunResult& r) {
    return "holdfast-check --nemesis " + r.scenario + " --topology " + topology_name(r.topology) + " --seed " +
           std::to_string(r.seed) + " --processes " +
           std::to_string(o.processes) + " --locks " + std::to_string(o.locks) + " --lease " +
           std::to_string(o.lease.count()) + "ms --timeout " + std::to_string(o.client_timeout().count()) +
           "ms --duration " + std::to_string(o.duration.count()) + "ms --schedule " + r.schedule +
           " --primitive " + primitive_flag(r.primitive) +
           (is_semaphore(r.primitive) ? " --permits " + std::to_string(o.permits) : "") +
           (r.topology != Topology::server ? " --replica-sync " + o.replica_sync : "") +
           (o.replica_sync_timeout.count() > 0
                ? " --replica-sync-timeout " + std::to_string(o.replica_sync_timeout.count()) + "ms"
                : "") +
           (o.strict ? " --strict" : "");
}

void write_report(std::ostream& out, const Options& o, const std::vector<RunResult>& results) {
    std::vector<Row> rows;
    for (const RunResult& r : results) {
        auto it = std::find_if(rows.begin(), rows.end(),
                               [&](const Row& row) {
                                   return row.scenario == r.scenario && row.topology == r.topology &&
                                          row.primitive == r.primitive;
                               });
        if (it == rows.end()) {
            it = rows.insert(rows.end(), Row());
            it->scenario = r.scenario;
            it->topology = r.topology;
            it->primitive = r.primitive;
        }
        it->add(r);
    }
    std::vector<std::vector<std::string>> table{{"nemesis", "topology", "primitive", "runs", "acquires", "granted",
                                                 "unknown", "leases lost", "faults", "overlaps", "overlaps untold/told",
                                                 "lost releases", "keys without expiry", "lost permits",
                                                 "holds nobody believes", "false unlocks",
                                                 "lost updates",
                                                 "stale writes accepted", "fenced out", "token order", "FIFO",
                                                 "leaked holds", "renewed after release", "other",
                                                 "re-grant max", "wake-up p50/p99/max ms", "slow wake-ups",
                                                 "resume after failover p50/max ms",
                                                 "wake-up behind a failover p50/max ms", "longest unavailable",
                                                 "verdict"}};
    for (const Row& r : rows) {
        const bool fenced = r.primitive == Primitive::fenced;
        const bool counter = !is_semaphore(r.primitive);  // a semaphore's holders keep no counter
        table.push_back({r.scenario, topology_name(r.topology), primitive_name(r.primitive), std::to_string(r.runs),
                         std::to_string(r.attempts),
                         std::to_string(r.granted), std::to_string(r.unknown), std::to_string(r.lost_leases),
                         std::to_string(r.faults) +
                             (r.migrates ? " (" + std::to_string(r.releases_in_migration) + " releases inside)" : ""),
                         tally(r.overlaps),
                         counter ? std::to_string(r.untold) + "/" + std::to_string(r.told) : "-",
                         counter ? tally(r.lost_releases) : "-",
                         std::to_string(r.unleased),
                         counter ? "-" : tally(r.lost_permits),
                         counter ? tally(r.unbelieved) : "-",
                         counter ? std::to_string(r.false_unlocks) : "-",
                         counter ? tally(r.lost_updates) : "-",
                         counter ? tally(r.stale_writes) : "-", fenced ? std::to_string(r.refused) : "-",
                         fenced ? tally(r.token_order) : "-", is_fair(r.primitive) ? tally(r.fifo) : "-",
                         std::to_string(r.leaks), std::to_string(r.renewed_after_release),
                         std::to_string(r.other),
                         r.regrants ? ms(r.regrant_max) + (r.slow_regrants ? " (" + std::to_string(r.slow_regrants) +
                                                                                  " slow)" : "")
                                    : "-",
                         fixed(percentile(r.wakeups, 0.5)) + "/" + fixed(percentile(r.wakeups, 0.99)) + "/" +
                             fixed(percentile(r.wakeups, 1.0)),
                         std::to_string(r.slow_wakeups) +
                             (r.stalled_wakeups ? " (+" + std::to_string(r.stalled_wakeups) + " stalled)" : ""),
                         r.resumes.empty() ? "-"
                                           : std::to_string(std::lround(percentile(r.resumes, 0.5))) + "/" +
                                                 std::to_string(std::lround(percentile(r.resumes, 1.0))),
                         r.failover_wakeups.empty()
                             ? "-"
                             : std::to_string(std::lround(percentile(r.failover_wakeups, 0.5))) + "/" +
                                   std::to_string(std::lround(percentile(r.failover_wakeups, 1.0))),
                         ms(r.unavailable), r.failing.empty() ? "pass" : "FAIL"});
    }
    print_table(out, table);
    out << "\nNumbers are violations (promised not to happen); \"+N exp\" are anomalies a fault explains\n"
           "(a lease that ran out while its holder or the server was stopped, a restart that lost the lock).\n"
           "Overlaps of a Semaphore are moments with more holders than permits; of a ReadWriteLock, a writer\n"
           "with anyone else. FIFO counts pairs of FairLock waiters granted out of the order they queued in.\n"
           "Overlaps untold/told: every overlap, expected or not, by whether the earlier holder was told by\n"
           "lease_lost_token() before the other entered (or the later one at its entry). With a holder cut off by\n"
           "partition-holder an untold one is a violation, a told one is not (what fencing is for).\n"
           "Lost releases: a release that returned ok while the server kept the hold (its owner's field was\n"
           "read on a master after the release returned, before the holder tried that lock again).\n"
           "Keys without expiry: a key that should carry a lease found without one (a lock's hash by the witness\n"
           "during the run, each stretch once; any key by the sweep after it). Lost permits: a semaphore's permits\n"
           "that do not add up (free + held = configured; a plain semaphore after the run, allowing one per call of\n"
           "unknown outcome). Holds nobody believes: an owner's field on the server after its acquire failed, or\n"
           "after the run that it exited believing it did not hold. False unlocks: an unlock announced on a lock's\n"
           "channel while its holder's release was refused (nothing changed, so nothing was unlocked).\n"
           "Faults of cluster-migrate-slot: migrations, and the releases invoked while their lock's slot migrated.\n"
           "Resume after failover: per failover, the longest gap between two grants (any lock) overlapping it,\n"
           "from the last grant before the master stopped granting to the first after the failover.\n"
           "Wake-up: from a release's return to the next grant, where another worker waited across the release;\n"
           "its max is the longest wake-up after a release. A slow wake-up \"+N stalled\" is within the promise\n"
           "once the time the machine held the checker's own thread up (a 2 ms nap woken 10 ms late or more) is\n"
           "taken off: a machine busier than its cores, not a finding. Behind a failover (cluster-kill-primary-waiting): from\n"
           "the nemesis's release, after the promotion, to the next grant to a worker waiting since before it.\n";

    bool any = false;
    for (const RunResult& r : results) {
        if (r.violations() == 0) continue;
        if (!any) out << "\nFailing runs (histories kept in each run's directory):\n";
        any = true;
        out << "\n  " << run_line(r) << "\n  replay: " << replay_command(o, r) << "\n  histories: " << r.dir << '\n';
        for (const auto& f : r.findings) out << "    " << f << '\n';
    }
}

}  // namespace holdfast::check
