// CPU time, this process's and a server's: what a figure cost, beside how
// fast it ran (the client and the server share this machine's cores).
#pragma once

#include "holdfast/config.hpp"

namespace holdfast::bench {

/// The server's CPU time so far, in seconds (INFO cpu: user and system).
double server_cpu_seconds(const Config& config);

/// This process's CPU time so far, in seconds (every thread: the client's loop, the callers, the bench's waits).
double own_cpu_seconds();

}  // namespace holdfast::bench
