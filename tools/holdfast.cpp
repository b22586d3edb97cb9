// holdfast: the command line tool. Parses the arguments (cli/options.cpp),
// runs one subcommand (cli/*.cpp), and turns failures into exit codes.
#include <string_view>

#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "holdfast/holdfast.hpp"
#include "holdfast/version.hpp"

namespace holdfast::cli {
namespace {

constexpr const char* description =
    "holdfast: distributed locks on Redis, compatible with Redisson's RLock.\n"
    "A lock is a Redis hash named after it; Java services using Redisson on the same name share it.";

constexpr const char* exit_codes =
    "Exit codes: 0 success; 1 server or lock error (e.g. the key is not a lock), or a lock held without\n"
    "a command was lost; 2 bad usage; 69 Redis unreachable or credentials refused; 75 --wait or -n ran\n"
    "out (or -E N). `run` otherwise exits with the command's status (128+N if signal N killed it;\n"
    "126 not executable; 127 not found). With --json, every error is also one JSON object on stdout:\n"
    "{\"error\":{\"exit_code\":69,\"message\":\"...\"}}.";

// Parse errors print the way CLI11 does, with our prefix and hints for the
// commonest mistakes: command options read as holdfast's.
std::string failure_message(const CLI::App* app, const CLI::Error& error) {
    std::string text = "holdfast: " + std::string(error.what()) + '\n';
    // CLI11 reports an unknown subcommand as a missing one: name it.
    const auto left = app->remaining();
    const auto chosen = app->get_subcommands();
    if (dynamic_cast<const CLI::RequiredError*>(&error) && chosen.empty() && !left.empty())
        text = "holdfast: unknown command '" + left.front() + "'; the commands are run, status, list and unlock\n";
    const bool in_run = !chosen.empty() && chosen.front()->get_name() == "run";
    if (in_run && (dynamic_cast<const CLI::ExtrasError*>(&error) || dynamic_cast<const CLI::ExcludesError*>(&error)))
        text += "If they belong to the command, put -- before it: holdfast run NAME -- COMMAND ARGS...\n";
    return text + "Run with --help for more information.\n";
}

// --json before any `--`: a parse error is reported as JSON too.
bool asks_for_json(int argc, char** argv) {
    for (int i = 1; i < argc && std::string_view(argv[i]) != "--"; ++i)
        if (std::string_view(argv[i]) == "--json") return true;
    return false;
}

// Exit 69 (EX_UNAVAILABLE): no usable server, whatever the reason; retrying
// with the same URL may help only for the first three.
bool unavailable(const std::error_code& code) {
    return code == errc::not_connected || code == errc::connection_lost || code == errc::reply_timeout ||
           code == errc::auth_refused || code == errc::tls_failed || code == errc::protocol_error;
}

}  // namespace
}  // namespace holdfast::cli

int main(int argc, char** argv) {
    namespace cli = holdfast::cli;
    cli::Options options;
    CLI::App app(cli::description, "holdfast");
    app.require_subcommand(1);
    app.fallthrough();  // global options may follow the subcommand
    app.footer(cli::exit_codes);
    app.failure_message(cli::failure_message);
    app.set_version_flag("--version", "holdfast " HOLDFAST_VERSION_STRING);
    const cli::Subcommands commands = cli::add_options(app, options);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() != 0 && cli::asks_for_json(argc, argv))
            cli::print_json_error(cli::exit_code::usage, e.what());
        return app.exit(e) == 0 ? cli::exit_code::ok : cli::exit_code::usage;  // 0: --help
    }

    cli::json_errors = options.run.json || options.status.json || options.list.json || options.unlock.json;
    try {
        if (commands.run->parsed()) return cli::run(options.global, options.run);
        if (commands.status->parsed()) return cli::status(options.global, options.status);
        if (commands.list->parsed()) return cli::list(options.global, options.list);
        return cli::unlock(options.global, options.unlock);
    } catch (const cli::UsageError& e) {
        return cli::fail(cli::exit_code::usage, e.what());
    } catch (const holdfast::Error& e) {
        return cli::fail(cli::unavailable(e.code()) ? cli::exit_code::unavailable : cli::exit_code::failure,
                         cli::describe(e));
    } catch (const std::exception& e) {
        return cli::fail(cli::exit_code::failure, cli::describe(e));
    }
}
