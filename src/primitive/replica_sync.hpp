// Replica sync (Config::replica_sync, Redisson's synced writes): after an
// acquire or release script, WAIT until the master's replicas hold the write.
// Nothing is sent where sync is off or the master has no replicas, except
// under `required` once one was seen (Connection::replicas()).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "transport/transport.hpp"

namespace holdfast::detail {

/// Why a write's WAIT (Transport::sync_replicas) fell short: the master has
/// replicas but none acknowledged the write, or it lost them (none listed,
/// after some were: `required` still waits for one), or the WAIT failed.
/// nullopt if it did not fall short.
std::optional<std::string> unsynced(const Transport& transport, const Failure& error,
                                    const Transport::ReplicaAck& ack);

/// After an acquire of `subject` (e.g. "lock 'orders'") whose key is `key`:
/// done(nullptr) unless ReplicaSync::required and no replica acknowledged it
/// (or the WAIT failed): then done(ReplicaSyncError naming the subject, the
/// master and its replicas), `answered` false if the WAIT got no reply. What
/// was taken is the caller's to give back.
void sync_acquire(Transport& transport, const std::string& key, std::string subject,
                  std::function<void(Failure refusal, bool answered)> done);

/// After a release: WAIT as configured, then `done` whatever it found (the
/// hold is gone on the master either way).
void sync_release(Transport& transport, const std::string& key, std::function<void()> done);

}  // namespace holdfast::detail
