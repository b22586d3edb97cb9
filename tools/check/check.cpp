#include "check.hpp"

#include <algorithm>
#include <iterator>
#include <sstream>

namespace holdfast::check {
namespace {

struct NemesisName {
    Nemesis nemesis;
    const char* name;
};

constexpr NemesisName names[] = {
    {Nemesis::none, "none"},
    {Nemesis::kill_holder, "kill-holder"},
    {Nemesis::pause_holder, "pause-holder"},
    {Nemesis::kill_connections, "kill-connections"},
    {Nemesis::kill_pubsub, "kill-pubsub"},
    {Nemesis::script_flush, "script-flush"},
    {Nemesis::pause_server, "pause-server"},
    {Nemesis::restart_persistent, "restart-persistent"},
    {Nemesis::restart_volatile, "restart-volatile"},
    {Nemesis::debug_sleep, "debug-sleep"},
    {Nemesis::partition_holder, "partition-holder"},
    {Nemesis::sentinel_failover, "sentinel-failover"},
    {Nemesis::sentinel_kill_master, "sentinel-kill-master"},
    {Nemesis::cluster_migrate_slot, "cluster-migrate-slot"},
    {Nemesis::cluster_failover, "cluster-failover"},
    {Nemesis::cluster_kill_primary, "cluster-kill-primary"},
    {Nemesis::revoke_rights, "revoke-rights"},
    {Nemesis::sentinel_failover_release, "sentinel-failover-release"},
    {Nemesis::cluster_kill_primary_waiting, "cluster-kill-primary-waiting"},
    {Nemesis::sentinel_hang, "sentinel-hang"},
    {Nemesis::pause_replica, "pause-replica"},
    {Nemesis::narrow_acl, "narrow-acl"},
};

constexpr const char* topology_names[] = {"auto", "server", "replicated", "sentinel", "cluster"};

struct PrimitiveName {
    Primitive primitive;
    const char* flag;
    const char* name;
};

constexpr PrimitiveName primitive_names[] = {
    {Primitive::rlock, "rlock", "RLock"},
    {Primitive::fenced, "fenced", "FencedLock"},
    {Primitive::fair, "fair", "FairLock"},
    {Primitive::rwlock, "rwlock", "ReadWriteLock"},
    {Primitive::semaphore, "semaphore", "Semaphore"},
    {Primitive::expirable, "expirable", "PermitExpirableSemaphore"},
    {Primitive::nonreentrant, "nonreentrant", "NonReentrantLock"},
    {Primitive::nonreentrant_fair, "nonreentrant-fair", "NonReentrantFairLock"},
    {Primitive::group, "group", "MultiValueLock"},
};

const PrimitiveName& entry_of(Primitive p) {
    for (const auto& entry : primitive_names)
        if (entry.primitive == p) return entry;
    return primitive_names[0];
}

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    std::istringstream in(text);
    for (std::string part; std::getline(in, part, separator);) parts.push_back(part);
    if (!text.empty() && text.back() == separator) parts.emplace_back();
    return parts;
}

}  // namespace

const std::vector<Nemesis>& all_nemeses() {
    static const std::vector<Nemesis> all = [] {
        std::vector<Nemesis> v;
        for (const auto& n : names) v.push_back(n.nemesis);
        return v;
    }();
    return all;
}

std::string nemesis_name(Nemesis n) {
    for (const auto& entry : names)
        if (entry.nemesis == n) return entry.name;
    return "?";
}

Nemesis parse_nemesis(const std::string& name) {
    std::string valid;
    for (const auto& entry : names) {
        if (name == entry.name) return entry.nemesis;
        valid += std::string(valid.empty() ? "" : ", ") + entry.name;
    }
    throw UsageError("unknown nemesis '" + name + "' (valid: all, " + valid + ")");
}

std::string Scenario::name() const {
    if (mix) return "mix";
    std::string text;
    for (Nemesis n : faults) text += (text.empty() ? "" : "+") + nemesis_name(n);
    return text;
}

bool Scenario::has(Nemesis n) const { return std::find(faults.begin(), faults.end(), n) != faults.end(); }

std::vector<Scenario> parse_scenarios(const std::string& text) {
    if (text == "all") {
        std::vector<Scenario> every;
        for (Nemesis n : all_nemeses()) every.push_back({{n}});
        return every;
    }
    std::vector<Scenario> scenarios;
    for (const std::string& item : split(text, ',')) {
        if (item.empty()) throw UsageError("empty scenario in --nemesis '" + text + "'");
        Scenario scenario;
        if (item == "mix") scenario.mix = true;
        else
            for (const std::string& part : split(item, '+')) {
                const Nemesis n = parse_nemesis(part);
                if (!scenario.has(n)) scenario.faults.push_back(n);
            }
        if (scenario.faults.size() > 1 && scenario.has(Nemesis::none))
            throw UsageError("'none' cannot be combined with other nemeses in '" + item + "'");
        if (scenario.has(Nemesis::restart_persistent) && scenario.has(Nemesis::restart_volatile))
            throw UsageError("restart-persistent and restart-volatile need differently configured servers; run them "
                             "as separate scenarios (" + item + ")");
        topology_of(scenario, Topology::automatic);  // some topology runs them all
        scenarios.push_back(std::move(scenario));
    }
    return scenarios;
}

std::string topology_name(Topology t) { return topology_names[static_cast<int>(t)]; }

Topology parse_topology(const std::string& name) {
    for (std::size_t i = 0; i < std::size(topology_names); ++i)
        if (name == topology_names[i]) return static_cast<Topology>(i);
    throw UsageError("unknown topology '" + name + "' (valid: auto, server, replicated, sentinel, cluster)");
}

bool runs_on(Nemesis n, Topology t) {
    if (needs_sentinel(n)) return t == Topology::sentinel;
    if (needs_cluster(n)) return t == Topology::cluster;
    switch (n) {
        case Nemesis::none:
        case Nemesis::kill_holder:
        case Nemesis::pause_holder:
            return true;
        case Nemesis::pause_replica:  // the master's replica
            return t == Topology::replicated || t == Topology::sentinel;
        case Nemesis::revoke_rights:  // ACL changes on every data node
        case Nemesis::narrow_acl:
            return t != Topology::cluster;
        default:  // act on the one server the run started with
            return t == Topology::server || t == Topology::replicated;
    }
}

Topology topology_of(const Scenario& scenario, Topology requested) {
    const auto all_run_on = [&](Topology t) {
        return std::all_of(scenario.faults.begin(), scenario.faults.end(), [t](Nemesis n) { return runs_on(n, t); });
    };
    if (requested != Topology::automatic) {
        for (Nemesis n : scenario.faults)
            if (!runs_on(n, requested))
                throw UsageError("nemesis " + nemesis_name(n) + " does not run on --topology " +
                                 topology_name(requested) + " (" + scenario.name() + ")");
        return requested;
    }
    if (scenario.mix) return Topology::replicated;
    for (Topology t : {Topology::server, Topology::replicated, Topology::sentinel, Topology::cluster})
        if (all_run_on(t)) return t;
    throw UsageError("no topology runs every nemesis of '" + scenario.name() +
                     "': the sentinel-* and cluster-* nemeses combine only with kill-holder, pause-holder, "
                     "pause-replica (sentinel), revoke-rights and narrow-acl (sentinel), and nemeses of their own "
                     "deployment; the others act on one server");
}

Scenario mixed(const Scenario& scenario, Topology topology, std::uint64_t seed) {
    if (!scenario.mix) return scenario;
    Scenario mix{{}, true};
    const Nemesis restart = seed % 2 ? Nemesis::restart_persistent : Nemesis::restart_volatile;
    for (Nemesis n : all_nemeses()) {
        if (n == Nemesis::none || !runs_on(n, topology)) continue;
        if ((n == Nemesis::restart_persistent || n == Nemesis::restart_volatile) && n != restart) continue;
        mix.faults.push_back(n);
    }
    return mix;
}

bool needs_sentinel(Nemesis n) {
    return n == Nemesis::sentinel_failover || n == Nemesis::sentinel_kill_master ||
           n == Nemesis::sentinel_failover_release || n == Nemesis::sentinel_hang;
}

bool needs_cluster(Nemesis n) {
    return n == Nemesis::cluster_migrate_slot || n == Nemesis::cluster_failover || n == Nemesis::cluster_kill_primary ||
           n == Nemesis::cluster_kill_primary_waiting;
}

bool fails_over(Nemesis n) {
    return needs_sentinel(n) || n == Nemesis::cluster_failover || n == Nemesis::cluster_kill_primary ||
           n == Nemesis::cluster_kill_primary_waiting;
}

std::string primitive_name(Primitive p) { return entry_of(p).name; }

std::string primitive_flag(Primitive p) { return entry_of(p).flag; }

std::vector<Primitive> parse_primitives(const std::string& text) {
    if (const auto comma = text.find(','); comma != std::string::npos) {
        auto list = parse_primitives(text.substr(0, comma));
        for (Primitive p : parse_primitives(text.substr(comma + 1))) list.push_back(p);
        return list;
    }
    if (text == "both") return {Primitive::rlock, Primitive::fenced};
    std::vector<Primitive> every;
    std::string valid;
    for (const auto& entry : primitive_names) {
        if (text == entry.flag) return {entry.primitive};
        every.push_back(entry.primitive);
        valid += std::string(entry.flag) + ", ";
    }
    if (text == "all") return every;
    throw UsageError("unknown primitive '" + text + "' (valid: " + valid + "both, all)");
}

std::string lock_name(int lock) { return "check:lock:" + std::to_string(lock); }

std::string acl_user_of(int slot) { return "check-worker-" + std::to_string(slot); }

std::string hold_id(int worker, long hold) { return std::to_string(worker) + "." + std::to_string(hold); }

}  // namespace holdfast::check
