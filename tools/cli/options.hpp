// The command line: holdfast's options and subcommands, as CLI11 reads them
// (cli/options.cpp).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli.hpp"

namespace holdfast::cli {

/// Everything the command line can say.
struct Options {
    GlobalOptions global;
    RunOptions run;
    StatusOptions status;
    ListOptions list;
    UnlockOptions unlock;
};

/// The subcommands, to tell which one was given.
struct Subcommands {
    CLI::App* run;
    CLI::App* status;
    CLI::App* list;
    CLI::App* unlock;
};

/// Declares every option and subcommand on `app`, storing into `options`,
/// which must outlive `app`'s parsing.
Subcommands add_options(CLI::App& app, Options& options);

}  // namespace holdfast::cli
