// The witness: reads what the lock server holds, a few times a lease, so the
// checker can see a hold that stayed after its release returned ok (a lost
// release), a lock without expiry, and a semaphore whose permits do not add
// up. It reads each lock's key on every node that says it is a master; on a
// cluster with ASKING, so a slot's importing node answers too.
#pragma once

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "history.hpp"

namespace holdfast::check {

class Witness {
public:
    /// Starts reading `locks` locks on the nodes at `ports` every `every`,
    /// appending each answer to `path` (witness.log). A node that is down,
    /// or says it is a replica, is skipped that round. `group`: the locks are
    /// group locks, whose holders are read from their hashes (group_layout.hpp).
    Witness(std::vector<std::uint16_t> ports, bool cluster, bool group, int locks, Duration every,
            const std::string& path);
    /// Stops after the read in progress (a stopped server holds it up until resumed).
    ~Witness();
    Witness(const Witness&) = delete;
    Witness& operator=(const Witness&) = delete;

private:
    void run(std::stop_token stop);

    std::vector<std::uint16_t> ports_;
    bool cluster_;
    bool group_;
    int locks_;
    Duration every_;
    HistoryWriter log_;
    std::jthread thread_;  // last: started once the rest is ready
};

}  // namespace holdfast::check
