// What narrow-acl takes away: every command the scripts of a primitive's
// workload run (and the publish command they are given), listed from the
// scripts themselves (src/**/*.lua; checker_test.cpp reads them and holds
// the lists to them, so a script that starts running a new command fails the
// test until the list has it).
#pragma once

#include <string>
#include <vector>

#include "check.hpp"

namespace holdfast::check {

struct ScriptCommands {
    std::vector<std::string> scripts;   // under src/, as the workload's primitive runs them
    std::vector<std::string> commands;  // lowercase, sorted; `publish` for the publish command
};

const ScriptCommands& script_commands(Primitive primitive);

}  // namespace holdfast::check
