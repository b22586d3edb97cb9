// What `holdfast run` holds once it has acquired (a lock or a semaphore
// permit), and what it does while holding: run the command in its process
// group, or hold until signalled.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "cli/acquire.hpp"
#include "cli/cli.hpp"
#include "cli/process.hpp"

namespace holdfast::cli {

struct Hold {
    std::string owner;                   // HOLDFAST_OWNER: the lock's owner id, or the permit's id
    std::optional<std::int64_t> token;   // HOLDFAST_TOKEN: a fenced lock's
    std::stop_token lost;                // requested when the hold is found gone
    /// The local lease deadline, where the library does not watch it (a permit); empty: none.
    std::function<std::optional<std::chrono::steady_clock::time_point>()> deadline;
    std::string why_lost;                // "lost the lock 'x' (...)": the warning when it is
    std::function<void()> release;       // never throws; warns on failure
};

/// Runs the command while holding (or, without one, holds until a signal),
/// then releases. Returns holdfast's exit code.
int hold_and_run(const Hold& hold, const RunOptions& options, Events& events, const std::vector<int>& inherited);

/// Ends holdfast run when the acquire took nothing (the exit code); nullopt when it did.
/// `what`: "lock" or "semaphore".
std::optional<int> unless_acquired(const Acquisition& acquisition, const RunOptions& options, const std::string& what);

}  // namespace holdfast::cli
