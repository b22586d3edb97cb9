// The replica nemesis: the master's replica paused while workers release and
// take the same lock again at once, so that releases (and acquires, and
// renewals) meet replica sync's WAIT with nobody to confirm them.
#include "nemesis.hpp"

#include <thread>

namespace holdfast::check {

// SIGSTOP of the master's replica (of a replicated server, or of a Sentinel
// deployment) struck as a holder's critical section ends (waiting up to 6
// leases for one), for 0.5-3 leases, then SIGCONT. The holder's release finds
// no replica: under replica sync `wait` and `required` it is reported
// unconfirmed and sent again later, while the worker (--relock) takes the same
// lock again at once, half the time; under `required` that acquire is given
// back until the replica returns. A re-sent release must never touch the hold
// taken after it. The fault lasts until the replica has caught up again.
bool NemesisRunner::pause_replica() {
    support::RedisServer* replica = deployment_.replica();
    support::RedisServer* master = deployment_.master();
    if (!replica || !master) throw std::logic_error("nemesis pause-replica without a replica");
    if (!replica_in_sync(master->port())) return false;  // one catching up confirms nothing anyway
    const int slot = holder_about_to_release(now_ns() + 6 * to_ns(lease_), [] { return false; });
    const int worker = slot < 0 ? -1 : workers_.worker_in(slot);
    const int lock = slot < 0 ? -1 : status_.slots[slot].holding.load();
    const Duration pause = scaled(0.5, 3.0);
    const Nanos start = now_ns();
    replica->pause();
    std::this_thread::sleep_for(pause);
    replica->resume();
    const Nanos resumed = now_ns();
    const std::string caught_up = replica_in_sync(master->port(), std::chrono::seconds(10))
                                      ? ", caught up " + ms_text(now_ns() - resumed) + " later"
                                      : "; not caught up within 10 s";
    const Nanos end = now_ns();
    log_.write(Fault{start, end, Nemesis::pause_replica, worker, lock,
                     "SIGSTOP of replica :" + std::to_string(replica->port()) + " of master :" +
                         std::to_string(master->port()) + " for " + ms_text(resumed - start) +
                         (slot < 0 ? ", no holder leaving its section"
                                   : ", as worker " + std::to_string(worker) + " left its section of " +
                                         lock_name(lock)) +
                         caught_up});
    return true;
}

}  // namespace holdfast::check
