// The nemesis: applies one fault at a time, drawn from the run's scenario by
// the run's seed, to the lock server or to a worker, and logs each one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "check.hpp"
#include "deployment.hpp"
#include "history.hpp"
#include "tcp_proxy.hpp"
#include "status.hpp"
#include "workers.hpp"

namespace holdfast {
class Client;
}

namespace holdfast::check {

class OwnHold;  // cluster-kill-primary-waiting's hold (nemesis_cluster.cpp)

/// "123ms", for fault details.
std::string ms_text(Nanos ns);
/// Whether the master at `master_port` has a replica in sync (WAIT), within `within`.
bool replica_in_sync(std::uint16_t master_port, std::chrono::seconds within = std::chrono::seconds(2));

class NemesisRunner {
public:
    /// `dir`: the run's directory, for the nemesis's own history (worker-nemesis.log);
    /// `replica_sync`: the workers' Config::replica_sync, which the nemesis's own client uses too.
    /// `primitive`: the workers', which the nemesis takes too where it holds a lock itself.
    NemesisRunner(const Scenario& scenario, Primitive primitive, Duration lease, int locks, std::uint64_t seed,
                  Deployment& deployment, Workers& workers, StatusPage& status, HistoryWriter& log,
                  std::vector<std::unique_ptr<support::TcpProxy>>& proxies, std::string dir = {},
                  std::string replica_sync = "required");
    ~NemesisRunner();

    /// Applies one fault and blocks while it lasts. False if there was nothing
    /// to hit (no worker inside a critical section within one lease).
    bool strike();
    /// How long to wait before the next strike: 1 to 3 leases.
    Duration gap();
    /// Failovers slower than this deployment's usual (named after more than
    /// 3 s, or the old master not back within 10 s), as the fault log says them.
    const std::vector<std::string>& unusual() const { return unusual_; }

private:
    bool hit_holder(Nemesis kind);
    bool revoke_rights();
    bool narrow_acl();
    bool pause_replica();
    /// ACL SETUSER `user` `rules...` on every data node (ACLs are per node).
    void set_user(const std::string& user, const std::vector<std::string>& rules);
    int any_holder();
    int holder_staying_inside();
    bool fail_over(Nemesis kind);
    int holder_about_to_release(Nanos until, const std::function<bool()>& over);
    bool fail_over_under_release();
    bool hang_sentinel();
    void migrate_slot();
    bool fail_over_primary(Nemesis kind);
    bool cluster_ready();
    bool kill_primary_under_waiters();
    void own_client();
    bool own_call(Op op, int lock, const std::function<void()>& call);
    bool take_own(OwnHold& hold, int lock, Duration held_for);
    bool release_own(OwnHold& hold, int lock);
    int waiters_on(int lock, Nanos since_before);
    void log_own(Op op, Phase phase, int lock, std::int64_t value = -1, std::string message = {});
    void server_command(Nemesis kind, const std::vector<std::string>& command, Nanos start);
    Duration scaled(double low, double high);

    const Scenario& scenario_;
    Primitive primitive_;
    Duration lease_;
    int locks_;
    std::mt19937_64 random_;
    Deployment& deployment_;
    support::RedisServer& server_;  // the single-server nemeses' target: the master the run started with
    Workers& workers_;
    StatusPage& status_;
    HistoryWriter& log_;
    std::vector<std::unique_ptr<support::TcpProxy>>& proxies_;
    support::SentinelGroup* sentinels_;  // the deployment the sentinel-* nemeses fail over; else null
    support::RedisCluster* cluster_;     // the cluster the cluster-* nemeses act on; else null
    Nanos last_failover_ = 0;            // when the last cluster failover ended
    std::vector<std::string> unusual_;
    std::string dir_;
    std::string replica_sync_;
    // cluster-kill-primary-waiting: the nemesis's own client, which holds the
    // lock the workers wait for, and its history (made on first use).
    std::unique_ptr<Client> client_;
    std::unique_ptr<HistoryWriter> own_log_;
    long own_holds_ = 0;
    std::int64_t own_token_ = -1;  // the fencing token of its hold, where the primitive has one
    std::vector<std::string> narrow_order_;  // narrow-acl: the commands it takes away, in the seed's order
    std::size_t narrowed_ = 0;               // narrow-acl: how many it has taken away so far (each in turn)
};

}  // namespace holdfast::check
