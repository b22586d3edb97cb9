#include "primitive/replica_sync.hpp"

#include "common/message_of.hpp"
#include "holdfast/errors.hpp"
#include "transport/transport.hpp"

namespace holdfast::detail {

void sync_acquire(Transport& transport, const std::string& key, std::string subject,
                  std::function<void(std::function<void()>)> give_back, std::function<void(std::exception_ptr)> done) {
    const auto mode = transport.config().replica_sync;
    const auto timeout = transport.config().replica_sync_timeout;
    transport.sync_replicas(key, [mode, timeout, subject = std::move(subject), give_back = std::move(give_back),
                                  done = std::move(done)](std::exception_ptr error, Transport::ReplicaAck ack) {
        const bool unsynced = ack.replicas > 0 && (error || ack.acknowledged == 0);
        if (mode != ReplicaSync::required || !unsynced) return done(nullptr);
        const std::string why =
            error ? "the WAIT for its replicas failed (" + message_of(error) + ")"
                  : "none of its " + std::to_string(ack.replicas) + " replica(s) acknowledged it within " +
                        std::to_string(timeout.count()) + " ms (WAIT)";
        auto failure = std::make_exception_ptr(ReplicaSyncError(
            "holdfast: " + subject + " was taken on master " + ack.master + " but " + why +
            ", so a failover could lose it; it was given back (replica_sync = required). Check the replicas "
            "(INFO replication on the master), or set replica_sync to wait to go on without them"));
        give_back([done, failure] { done(failure); });
    });
}

void sync_release(Transport& transport, const std::string& key, std::function<void()> done) {
    transport.sync_replicas(key, [done = std::move(done)](std::exception_ptr, Transport::ReplicaAck) { done(); });
}

}  // namespace holdfast::detail
