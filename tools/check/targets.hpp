// The primitives a worker takes, behind one interface: a lock (either side
// of a read-write lock) or a permit of a semaphore, taken and released by
// the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "check.hpp"
#include "history.hpp"
#include "holdfast/config.hpp"

namespace holdfast {
class Client;
}

namespace holdfast::check {

// One lock (or semaphore) of the primitive under test, taken and released
// by the calling thread. `access` matters only to a ReadWriteLock.
class Target {
public:
    virtual ~Target() = default;
    /// Draws what the next acquire asks for, as the history notes it: a group
    /// lock's values (one letter each); empty for the other primitives.
    virtual std::string next_values() { return {}; }
    /// The fencing token (-1 for a primitive without), or nullopt when `wait` ran out.
    virtual std::optional<std::int64_t> try_acquire(Duration wait, Access access) = 0;
    virtual void release(Access access) = 0;
    /// Whether the caller's hold is still renewed (a semaphore's permits never are).
    virtual bool renewed(Access) { return false; }
    /// Holds the caller still has after its release; -1 where the primitive does not count them.
    virtual std::int64_t holds_left(Access access) = 0;
    /// lease_lost_token() of the calling thread's hold; none (stop_possible()
    /// false) where the primitive has none (a semaphore's permit has no lease).
    virtual std::stop_token lost_token(Access) { return {}; }
};


/// --replica-sync's spelling (off, wait, required; main.cpp checks it) as the
/// workers' and the nemesis's clients take it.
ReplicaSync replica_sync_named(const std::string& name);

/// The fields of the group_values in a group lock's hash -> the values.
std::map<std::string, std::string> group_value_names();

/// The target of lock `name` for the worker's primitive; `on_queued`: a
/// FairLock waiter has seen itself in the queue.
std::unique_ptr<Target> make_target(const WorkerOptions& o, Client& client, std::string name,
                                    std::function<void()> on_queued);

}  // namespace holdfast::check
