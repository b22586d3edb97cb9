// One run: fresh servers, P workers, the nemesis for `duration`, then the
// checkers. Everything it starts is stopped before it returns or throws.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "check.hpp"
#include "checker.hpp"

namespace holdfast::check {

struct RunSpec {
    Scenario scenario;
    Primitive primitive = Primitive::rlock;
    std::uint64_t seed = 0;
    int index = 0;  // 1-based, of `total`, for progress
    int total = 1;
};

/// Runs and checks one seed; its histories stay in a subdirectory of options.out.
/// `interrupted` (a signal) ends the run early, and checks what it has.
RunResult execute_run(const Options& options, const RunSpec& spec, const std::atomic<bool>& interrupted);

}  // namespace holdfast::check
