// The report: one table row per scenario and primitive, the failing seeds
// with the command that replays each, and what was found.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "check.hpp"
#include "checker.hpp"

namespace holdfast::check {

/// One line per finished run, for progress on long runs.
std::string run_line(const RunResult& result);

/// The whole report; `command` rebuilds a run's command line for a seed.
void write_report(std::ostream& out, const Options& options, const std::vector<RunResult>& results);

/// The command that repeats one run.
std::string replay_command(const Options& options, const RunResult& result);

}  // namespace holdfast::check
