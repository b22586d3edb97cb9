#include "topologies.hpp"

#include <stdexcept>
#include <string>

#include "holdfast/holdfast.hpp"
#include "redis_cluster.hpp"
#include "redis_server.hpp"
#include "test_certs.hpp"

namespace holdfast::bench {
namespace {

// A hash tag whose slot `node` serves, so redis-benchmark's keys need no redirect.
std::string tag_served_by(const support::RedisCluster& cluster, std::size_t node) {
    for (int i = 0; i < 10'000; ++i) {
        const std::string tag = "bench" + std::to_string(i);
        if (cluster.owner_of(cluster.slot_of(tag)) == node) return tag;
    }
    throw std::runtime_error("no hash tag found for cluster node " + std::to_string(node));
}

}  // namespace

TlsCase run_tls_case(std::size_t threads, int processes, const Durations& durations) {
    support::TestCerts certs;
    support::RedisServer server(support::TlsServer{certs.server_cert, certs.server_key, certs.ca, false});
    TlsCase result;
    result.ceiling =
        measure_ceiling(server.port(), durations, {server.tls_port(), {"--tls", "--cacert", certs.ca}, "", true});
    Config config = Config::from_uri(server.tls_url());
    config.tls.ca_file = certs.ca;
    result.single = run_single_thread(config, durations.uncontended);
    result.many_pairs_per_s = run_many_threads(config, threads, durations.uncontended);
    if (processes > 0)
        result.contended = run_contended({config, server.port()}, Primitive::lock, processes, durations.contended);
    return result;
}

ClusterCase run_cluster_case(std::size_t threads, int processes, const Durations& durations) {
    support::RedisCluster cluster(3);
    ClusterCase result;
    for (std::size_t i = 0; i < cluster.size(); ++i)
        result.per_master.push_back(
            measure_ceiling(cluster.port(i), durations, {0, {}, tag_served_by(cluster, i), false}));
    result.names_per_master.assign(cluster.size(), 0);
    for (std::size_t t = 0; t < threads; ++t)  // the names run_many_threads locks
        ++result.names_per_master.at(cluster.owner_of(cluster.slot_of("bench:many:" + std::to_string(t))));
    const Config config = Config::from_uri(cluster.url());
    result.single = run_single_thread(config, durations.uncontended);
    result.many_pairs_per_s = run_many_threads(config, threads, durations.uncontended);
    if (processes > 0) {
        const std::size_t master = cluster.owner_of(cluster.slot_of(contended_lock_name));
        result.contended = run_contended({config, cluster.port(master)}, Primitive::lock, processes,
                                         durations.contended);
    }
    return result;
}

}  // namespace holdfast::bench
