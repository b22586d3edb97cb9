// The unlock listener: hears every message the lock server publishes on the
// run's lock and semaphore channels (PSUBSCRIBE on the node that says it is
// master, followed to a new one after a failover) and logs when each came
// (unlocks.log), so the checker can see an unlock announced by a release
// that did not happen.
#pragma once

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "history.hpp"

namespace holdfast::check {

class UnlockListener {
public:
    /// Listens on whichever of the data nodes at `ports` says it is master.
    UnlockListener(std::vector<std::uint16_t> ports, const std::string& path);
    /// Stops within about 50 ms.
    ~UnlockListener();
    UnlockListener(const UnlockListener&) = delete;
    UnlockListener& operator=(const UnlockListener&) = delete;

private:
    void run(std::stop_token stop);

    std::vector<std::uint16_t> ports_;
    HistoryWriter log_;
    std::jthread thread_;  // last: started once the rest is ready
};

}  // namespace holdfast::check
