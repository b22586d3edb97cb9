// The worker processes of one run: holdfast-check itself, exec'd in worker
// mode, one per slot. A killed or crashed worker is replaced in its slot by a
// new one with a new id, so histories never mix two processes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "check.hpp"

namespace holdfast::check {

class Workers {
public:
    /// `base` is copied into every worker's options; id, slot, seed and
    /// history are filled per worker. Logs go to `dir`. `lock_ports`, if not
    /// empty, gives each slot its own way to the lock server (its proxy).
    Workers(WorkerOptions base, std::string dir, int slots, std::vector<std::uint16_t> lock_ports = {});
    /// SIGKILLs whatever is still running: no worker outlives its run.
    ~Workers();
    Workers(const Workers&) = delete;
    Workers& operator=(const Workers&) = delete;

    struct Exit {
        int worker;
        int slot;
        Nanos time;       // when the coordinator noticed
        int status;       // exit code, or 128 + signal
        std::string log;  // the worker's stderr
    };

    void start();
    int worker_in(int slot) const { return slots_[slot].worker; }
    pid_t pid_in(int slot) const { return slots_[slot].pid; }
    int slots() const { return static_cast<int>(slots_.size()); }
    /// Reaps workers that exited on their own and replaces them; returns them.
    std::vector<Exit> reap_unexpected();
    /// SIGKILLs the worker in `slot`, waits for it, starts a replacement.
    /// Returns the time the signal was sent.
    Nanos kill_and_replace(int slot);
    /// Waits until every worker has exited (after the stop flag) or `deadline`;
    /// SIGKILLs the rest. Returns the workers that exited badly or had to be killed.
    std::vector<Exit> stop(Nanos deadline);
    /// Worker id -> time it was SIGKILLed (by kill_and_replace or stop).
    const std::vector<std::pair<int, Nanos>>& killed() const { return killed_; }

private:
    struct Slot {
        int worker = -1;
        pid_t pid = -1;
    };
    void spawn(int slot);
    std::string log_of(int worker) const;

    WorkerOptions base_;
    std::string dir_;
    std::vector<Slot> slots_;
    std::vector<std::uint16_t> lock_ports_;
    int next_id_ = 0;
    std::vector<std::pair<int, Nanos>> killed_;
};

/// Status as a shell reports it: the exit code or 128 + the signal.
int shell_status(int wait_status);

}  // namespace holdfast::check
