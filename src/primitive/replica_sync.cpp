#include "primitive/replica_sync.hpp"

#include "common/message_of.hpp"
#include "holdfast/errors.hpp"

namespace holdfast::detail {

std::optional<std::string> unsynced(const Transport& transport, const std::exception_ptr& error,
                                    const Transport::ReplicaAck& ack) {
    if (ack.replicas == 0 || (!error && ack.acknowledged > 0)) return std::nullopt;
    if (error) return "the WAIT for its replicas failed (" + message_of(error) + ")";
    return "none of its " + std::to_string(ack.replicas) + " replica(s) acknowledged it within " +
           std::to_string(transport.config().replica_sync_timeout.count()) + " ms (WAIT)";
}

void sync_acquire(Transport& transport, const std::string& key, std::string subject,
                  std::function<void(std::function<void()>)> give_back, std::function<void(std::exception_ptr)> done) {
    transport.sync_replicas(key, [&transport, subject = std::move(subject), give_back = std::move(give_back),
                                  done = std::move(done)](std::exception_ptr error, Transport::ReplicaAck ack) {
        const auto why = unsynced(transport, error, ack);
        if (transport.config().replica_sync != ReplicaSync::required || !why) return done(nullptr);
        auto failure = std::make_exception_ptr(ReplicaSyncError(
            "holdfast: " + subject + " was taken on master " + ack.master + " but " + *why +
            ", so a failover could lose it; it was given back (replica_sync = required). Check the replicas "
            "(INFO replication on the master), or set replica_sync to wait to go on without them"));
        give_back([done, failure] { done(failure); });
    });
}

void sync_release(Transport& transport, const std::string& key, std::function<void()> done) {
    transport.sync_replicas(key, [done = std::move(done)](std::exception_ptr, Transport::ReplicaAck) { done(); });
}

}  // namespace holdfast::detail
