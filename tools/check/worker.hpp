// The worker mode of holdfast-check: one client process of the workload.
#pragma once

#include "check.hpp"

namespace holdfast::check {

/// Runs until the run's status page says stop; returns the exit status.
/// Throws only for failures outside the lock (the resource, the history file).
int run_worker(const WorkerOptions& options);

}  // namespace holdfast::check
