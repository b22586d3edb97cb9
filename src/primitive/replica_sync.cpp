#include "primitive/replica_sync.hpp"


namespace holdfast::detail {

std::optional<std::string> unsynced(const Transport& transport, const Failure& error,
                                    const Transport::ReplicaAck& ack) {
    if (ack.replicas == 0 || (!error && ack.acknowledged > 0)) return std::nullopt;
    const std::string within = " within " + std::to_string(transport.config().replica_sync_timeout.count()) + " ms (WAIT)";
    std::string why = error              ? "the WAIT for its replicas failed (" + error.message() + ")"
                      : ack.replicas_lost ? "no replica acknowledged it" + within
                                          : "none of its " + std::to_string(ack.replicas) + " replica(s) acknowledged it" + within;
    if (ack.replicas_lost)
        why += ": the master has lost its replicas (ROLE lists none, where this client saw one before: a failover "
               "under way, or the replicas are down)";
    return why;
}

void sync_acquire(Transport& transport, const std::string& key, std::string subject,
                  std::function<void(Failure, bool)> done) {
    transport.sync_replicas(key, [&transport, subject = std::move(subject),
                                  done = std::move(done)](Failure error, Transport::ReplicaAck ack) {
        const auto why = unsynced(transport, error, ack);
        if (transport.config().replica_sync != ReplicaSync::required || !why) return done(nullptr, true);
        const char* what_to_do = ack.replicas_lost
                                     ? "Retry once the failover is over or a replica is back (INFO replication on "
                                       "the master), or set replica_sync to wait to go on without them"
                                     : "Check the replicas (INFO replication on the master), or set replica_sync "
                                       "to wait to go on without them";
        done(Failure(errc::replicas_unconfirmed,
                     "holdfast: " + subject + " was taken on master " + ack.master + " but " + *why +
                         ", so a failover could lose it; it was given back (replica_sync = required). " + what_to_do),
             !(error && is_unanswered(error.code())));
    });
}

void sync_release(Transport& transport, const std::string& key, std::function<void()> done) {
    transport.sync_replicas(key, [done = std::move(done)](Failure, Transport::ReplicaAck) { done(); });
}

}  // namespace holdfast::detail
