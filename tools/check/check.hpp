// holdfast-check: what a run is asked to do, shared by the coordinator, the
// workers and the checker. RELIABILITY.md explains the whole program.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace holdfast::check {

using Duration = std::chrono::milliseconds;
/// CLOCK_MONOTONIC in nanoseconds: one clock for every process on the machine,
/// so histories written by different processes can be merged.
using Nanos = std::int64_t;

inline Nanos now_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return Nanos(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

constexpr Nanos to_ns(Duration d) { return Nanos(d.count()) * 1'000'000; }

/// Most worker processes a run may have (slots in the shared status page).
constexpr int max_processes = 64;

/// Bad input, found after parsing; exits 2 with the message.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// One kind of fault. The names are the --nemesis spellings (nemesis_name()).
enum class Nemesis {
    none,                // no fault: the baseline
    kill_holder,         // SIGKILL a process inside its critical section
    pause_holder,        // SIGSTOP a process inside its critical section for 0.5-3 x lease
    kill_connections,    // CLIENT KILL TYPE normal: every command connection
    kill_pubsub,         // CLIENT KILL TYPE pubsub: every pub/sub connection
    script_flush,        // SCRIPT FLUSH: the next EVALSHA gets NOSCRIPT
    pause_server,        // SIGSTOP redis-server for 0.1-2 x lease
    restart_persistent,  // kill -9 and restart redis-server, appendonly yes + appendfsync always
    restart_volatile,    // kill -9 and restart redis-server without persistence
    debug_sleep,         // DEBUG SLEEP 0.1-2 x lease
    partition_holder,    // freeze the proxy of a process inside its critical section for 1.5-3 x lease
    sentinel_failover,     // SENTINEL FAILOVER: the replica is promoted, the old master follows it
    sentinel_kill_master,  // kill -9 the Sentinel master: the sentinels promote the replica; it comes back as one
    cluster_migrate_slot,  // move a lock's slot to another master of a three-master cluster (MOVED, ASK)
    cluster_failover,      // CLUSTER FAILOVER on the replica of a lock's primary: the replica is promoted
    cluster_kill_primary,  // kill -9 a lock's primary: the cluster promotes its replica; it comes back as one
    revoke_rights,         // ACL: take a holder's channels away for 0.5-2 x lease (its release is refused), then give them back
    sentinel_failover_release,  // SENTINEL FAILOVER struck as a holder's critical section ends: its release meets the failover
    cluster_kill_primary_waiting,  // kill -9 a lock's primary while workers sleep waiting for it (the nemesis holds it)
    sentinel_hang,  // SIGSTOP the first sentinel, SENTINEL FAILOVER through the second at Sentinel's pace, SIGCONT
    pause_replica,  // SIGSTOP the master's replica as a holder is about to release (workers re-take at once), SIGCONT
    narrow_acl,     // ACL: take one command its scripts run from a worker's user for 0.5-2 x lease, then give it back
};

/// Where the lock server runs: one redis-server; one with a replica (the
/// workers still reach the master directly); a Sentinel deployment (a master,
/// a replica, three sentinels); a Redis Cluster of three masters. `automatic`:
/// the first of these on which every nemesis of the scenario runs.
enum class Topology { automatic, server, replicated, sentinel, cluster };
std::string topology_name(Topology t);
/// Throws UsageError listing the valid names.
Topology parse_topology(const std::string& name);
/// Whether nemesis `n` can act on topology `t`.
bool runs_on(Nemesis n, Topology t);

/// The nemeses that need the lock server deployed under Sentinel (a master,
/// a replica, three sentinels), which the others do not know.
bool needs_sentinel(Nemesis n);
/// The nemeses that need the lock server to be a Redis Cluster.
bool needs_cluster(Nemesis n);
/// The nemeses that promote a replica (Sentinel or Cluster): asynchronous
/// replication may lose the writes it had not received.
bool fails_over(Nemesis n);

const std::vector<Nemesis>& all_nemeses();
std::string nemesis_name(Nemesis n);
/// Throws UsageError listing the valid names.
Nemesis parse_nemesis(const std::string& name);

/// The faults of one run: one nemesis, or several combined ("a+b") and drawn
/// at random, one at a time.
struct Scenario {
    std::vector<Nemesis> faults;
    /// `mix`: every nemesis the topology allows, drawn at random (faults are
    /// filled per run by mixed()).
    bool mix = false;
    std::string name() const;
    bool has(Nemesis n) const;
};
/// "all" (each nemesis alone, in turn), "mix", or a comma list of scenarios "a,b+c".
std::vector<Scenario> parse_scenarios(const std::string& text);
/// The topology `scenario` runs on: `requested`, or the one its nemeses need
/// (a mix: replicated, which allows every single-server nemesis and
/// pause-replica). Throws UsageError if a nemesis cannot run there.
Topology topology_of(const Scenario& scenario, Topology requested);
/// A mix for one run: every nemesis that runs on `topology`, except that a
/// run restarts its server either with persistence or without (picked by
/// `seed`: they need differently configured servers). Other scenarios as they are.
Scenario mixed(const Scenario& scenario, Topology topology, std::uint64_t seed);

/// Which primitive the workers take. primitive_flag() is the --primitive
/// spelling, primitive_name() the report's.
enum class Primitive {
    rlock,      // Lock (Redisson's RLock)
    fenced,     // FencedLock; the resource refuses stale tokens
    fair,       // FairLock: also checked for first-come, first-served grants
    rwlock,     // ReadWriteLock: each hold takes the read or the write side at random
    semaphore,  // Semaphore: each hold is one of its `permits` permits
    expirable,  // PermitExpirableSemaphore: each hold is one of its `permits` permits, with a lease
    nonreentrant,       // NonReentrantLock: a Lock its holder may not take again
    nonreentrant_fair,  // NonReentrantFairLock: a FairLock its holder may not take again; checked for FIFO too
    group,  // MultiValueLock: each hold takes 2 or 3 of the group_values of the lock's group
};
/// The values of a group lock (--primitive group), one letter each. A hold
/// takes 2 or 3 of them: any two such sets share a value.
inline constexpr const char* group_values = "abc";
/// Semaphore or PermitExpirableSemaphore: up to `permits` holders at once, no owner.
inline bool is_semaphore(Primitive p) { return p == Primitive::semaphore || p == Primitive::expirable; }
/// FairLock or NonReentrantFairLock: a queue, checked for first-come, first-served grants.
inline bool is_fair(Primitive p) { return p == Primitive::fair || p == Primitive::nonreentrant_fair; }
std::string primitive_name(Primitive p);
std::string primitive_flag(Primitive p);
/// One --primitive spelling, "both" (rlock and fenced), "all", or a comma
/// list of them; throws
/// UsageError listing the valid names.
std::vector<Primitive> parse_primitives(const std::string& text);

/// The dead-waiter timeout of the workload's FairLocks (FairLock's default): a
/// waiter lost in the queue holds up the waiters behind it for about this long.
constexpr Duration fair_wait_budget{5000};

/// Critical-section lengths: short (0 to lease/5) or long (0 to 2 x lease,
/// renewed by the watchdog meanwhile); random picks one per run from the seed.
enum class Schedule { random, short_sections, long_sections };

struct Options {
    std::uint64_t seed = 0;
    int runs = 1;  // seeds seed, seed+1, ... for every scenario
    int processes = 4;
    int locks = 2;
    Duration lease{1000};
    Duration timeout{0};  // Config::timeout of the workers; 0: equal to the lease
    Duration duration{10000};
    Schedule schedule = Schedule::random;
    std::vector<Scenario> scenarios;
    std::vector<Primitive> primitives{Primitive::rlock};
    std::int64_t permits = 2;  // Semaphore, PermitExpirableSemaphore: each one's permits, set if absent
    std::string out;
    bool progress = true;
    bool strict = false;  // count anomalies a fault explains as violations too
    Topology topology = Topology::automatic;
    std::string replica_sync = "required";  // the workers' Config::replica_sync (failover nemeses)
    Duration replica_sync_timeout{0};  // the workers' Config::replica_sync_timeout; 0: replica_sync_wait()

    Duration client_timeout() const { return timeout.count() > 0 ? timeout : lease; }
    /// The workers' Config::replica_sync_timeout: as given; else a quarter of
    /// the lease (at most 1 s) under pause-replica, whose releases must be
    /// reported unconfirmed before their hold's local deadline passes (a
    /// WAIT as long as the lease never is: docs/deployments.md asks for one
    /// well below it); else the library's default, 1 s, as the runs before it.
    Duration replica_sync_wait(const Scenario& scenario) const {
        if (replica_sync_timeout.count() > 0) return replica_sync_timeout;
        return scenario.has(Nemesis::pause_replica) ? std::min(Duration(1000), lease / 4) : Duration(1000);
    }
    /// How long a worker waits for a lock before it gives up and picks another:
    /// 5 leases; 30 where the nemesis kills a primary under waiters, which must
    /// still wait after its promotion and rejoin (seconds).
    Duration acquire_wait(const Scenario& scenario) const {
        return lease * (scenario.has(Nemesis::cluster_kill_primary_waiting) ? 30 : 5);
    }
};

/// What one worker process is told on its command line.
struct WorkerOptions {
    int id = 0;  // unique in the run, also across replacements
    int slot = 0;
    std::uint16_t lock_port = 0;
    std::string lock_url;             // set: the lock server's URI (a Sentinel deployment), not lock_port
    std::string replica_sync = "required";  // Config::replica_sync: off, wait or required
    Duration replica_sync_timeout{1000};    // Config::replica_sync_timeout
    std::uint16_t resource_port = 0;
    int locks = 2;
    Duration lease{1000};
    Duration timeout{1000};
    Duration max_section{200};
    Duration acquire_wait{5000};  // try_lock_for's wait
    Primitive primitive = Primitive::rlock;
    std::int64_t permits = 2;  // Semaphore: the count set before each acquire if absent
    std::uint64_t seed = 0;
    std::string history;  // file this worker appends its events to
    std::string status;   // the run's shared status file
    bool acl_users = false;  // connect as acl_user_of(slot), whose rights revoke-rights and narrow-acl narrow
    bool relock = false;     // after a release, take the same lock again at once half the time (pause-replica)
};

/// The ACL user of a worker slot under revoke-rights (password acl_password).
std::string acl_user_of(int slot);
inline constexpr const char* acl_password = "check";

/// The worker id of the nemesis's own holds in the histories
/// (cluster-kill-primary-waiting), in worker-nemesis.log.
inline constexpr int nemesis_worker = 1'000'000;

/// Names shared by workers and checker.
std::string lock_name(int lock);
std::string hold_id(int worker, long hold);

}  // namespace holdfast::check
