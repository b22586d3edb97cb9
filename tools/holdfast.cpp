// holdfast: the command line tool. Parses the arguments, runs one
// subcommand (cli/*.cpp), and turns failures into exit codes.
#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <limits>

#include "cli/cli.hpp"
#include "cli/duration.hpp"
#include "cli/process.hpp"
#include "holdfast/holdfast.hpp"
#include "holdfast/version.hpp"

namespace holdfast::cli {

namespace {
// Event::to_string() without its "holdfast: " (warn() adds it).
std::string describe_event(const Event& event) {
    std::string line = event.to_string();
    constexpr std::string_view prefix = "holdfast: ";
    return line.starts_with(prefix) ? line.substr(prefix.size()) : line;
}
}  // namespace

Config make_config(const GlobalOptions& options) {
    Config config;
    try {
        config = Config::from_uri(options.url);
    } catch (const std::invalid_argument& e) {
        throw UsageError(describe(e));
    }
    if (options.watchdog_timeout) config.lock_watchdog_timeout = *options.watchdog_timeout;
    if (!options.tls_ca.empty() || !options.tls_cert.empty() || !options.tls_key.empty()) {
        if (!config.tls.enabled)
            throw UsageError("--tls-ca, --tls-cert and --tls-key are for TLS: give a rediss:// URL");
        if (options.tls_cert.empty() != options.tls_key.empty())
            throw UsageError("give --tls-cert and --tls-key together (a client certificate and its key)");
        config.tls.ca_file = options.tls_ca;
        config.tls.cert_file = options.tls_cert;
        config.tls.key_file = options.tls_key;
    }
    if (options.verbose) config.on_event = [](const Event& event) { warn(describe_event(event)); };
    return config;
}

namespace {

using namespace std::chrono_literals;

constexpr const char* description =
    "holdfast: distributed locks on Redis, compatible with Redisson's RLock.\n"
    "A lock is a Redis hash named after it; Java services using Redisson on the same name share it.";

constexpr const char* exit_codes =
    "Exit codes: 0 success; 1 server or lock error (e.g. the key is not a lock); 2 bad usage;\n"
    "69 Redis unreachable or credentials refused; 75 --wait ran out. `run` otherwise exits with\n"
    "the command's status (128+N if signal N killed it; 126 not executable; 127 not found).";

constexpr const char* run_footer =
    "Examples:\n"
    "  holdfast run nightly-report -- ./report.sh --full\n"
    "  holdfast run --wait 10s --lease 5m deploy -- make deploy\n"
    "Without --lease the lock is renewed while COMMAND runs; if it is lost anyway (expired, or\n"
    "force-unlocked) COMMAND gets SIGTERM. SIGINT, SIGTERM and SIGHUP sent to holdfast are passed on.";

// CLI11 check: a duration, and at least `minimum`.
CLI::Validator duration_at_least(Duration minimum, std::string too_small) {
    return CLI::Validator(
        [minimum, too_small](std::string& text) -> std::string {
            try {
                return parse_duration(text) < minimum ? "'" + text + "' " + too_small : std::string();
            } catch (const UsageError& e) {
                return e.what();
            }
        },
        "");
}

// --semaphore N: decimal, 1 to INT64_MAX. Not CLI11's integer option, which
// reads 010 as octal and turns a number beyond INT64 into INT64_MAX.
std::optional<std::int64_t> permits_of(const std::string& text, std::string& why) {
    std::int64_t n = 0;
    const char* end = text.data() + text.size();
    const auto [stop, ec] = std::from_chars(text.data(), end, n);
    if (!text.empty() && text.front() != '-' && stop == end && ec == std::errc::result_out_of_range) {
        why = "'" + text + "' is beyond the largest count a semaphore holds, " +
              std::to_string(std::numeric_limits<std::int64_t>::max()) + " (Redis counts in 64-bit integers)";
    } else if (text.empty() || stop != end || ec != std::errc() || n < 1) {
        why = "'" + text + "' is not a count of permits: give a whole number from 1 to " +
              std::to_string(std::numeric_limits<std::int64_t>::max());
    } else {
        return n;
    }
    return std::nullopt;
}

std::int64_t parse_permits(const std::string& text) {
    std::string why;
    if (const auto n = permits_of(text, why)) return *n;
    throw UsageError(why);
}

const CLI::Validator permits_check(
    [](std::string& text) {
        std::string why;
        permits_of(text, why);
        return why;
    },
    "");

const CLI::Validator non_empty(
    [](std::string& text) { return text.empty() ? std::string("a lock name must not be empty") : std::string(); }, "");

// Adds a DURATION option that stores its parsed value in `target`.
CLI::Option* add_duration(CLI::App& app, const std::string& flags, std::optional<Duration>& target,
                          const std::string& help, CLI::Validator check) {
    return app
        .add_option_function<std::string>(
            flags, [&target](const std::string& text) { target = parse_duration(text); }, help)
        ->type_name("DURATION")
        ->check(std::move(check));
}

void add_global_options(CLI::App& app, GlobalOptions& global) {
    app.add_option("--url", global.url,
                   "Redis server: redis://[user:password@]host[:port][/db], "
                   "unix://[[user]:password@]/path.sock[?db=N&password=P&username=U], "
                   "redis-sentinel://[user:password@]host[:port][,host[:port]...][/db]#MASTER or "
                   "redis-cluster://[user:password@]host:port[,host:port...]; rediss://, rediss-sentinel:// "
                   "and rediss-cluster:// for TLS")
        ->envname("REDIS_URL")
        ->capture_default_str();
    app.add_option("--tls-ca", global.tls_ca, "TLS: trust the CA certificates in FILE (PEM) instead of the system's")
        ->type_name("FILE")
        ->check(CLI::Validator(CLI::ExistingFile).description(""));
    app.add_option("--tls-cert", global.tls_cert, "TLS: present the client certificate in FILE (PEM)")
        ->type_name("FILE")
        ->check(CLI::Validator(CLI::ExistingFile).description(""));
    app.add_option("--tls-key", global.tls_key, "TLS: the private key of --tls-cert (PEM)")
        ->type_name("FILE")
        ->check(CLI::Validator(CLI::ExistingFile).description(""));
    app.add_flag("-v,--verbose", global.verbose,
                 "Log the client's events to stderr: connections lost and restored, failed renewals, lost "
                 "leases, slow acquires, reloaded scripts");
    add_duration(app, "--watchdog-timeout", global.watchdog_timeout,
                 "Lease of a lock taken without --lease, renewed every third of it [30s]",
                 duration_at_least(3ms, "is below the minimum of 3ms"));
}

CLI::App* add_run(CLI::App& app, RunOptions& run) {
    auto* sub = app.add_subcommand("run", "Take lock NAME, run COMMAND while holding it, release it when COMMAND exits");
    sub->add_option("NAME", run.name, "Lock name")->required()->check(non_empty);
    add_duration(*sub, "--lease", run.lease,
                 "Hold the lock for this long, not renewed (default: renewed while COMMAND runs)",
                 duration_at_least(1ms, "is not a lease: it must be greater than 0"));
    add_duration(*sub, "-w,--wait", run.wait,
                 "Give up after this long and exit 75 without running COMMAND (default: wait as long as it takes)",
                 duration_at_least(0ms, ""));
    auto* fair = sub->add_flag_callback("--fair", [&run] { run.primitive = Primitive::fair; },
                                        "Take a fair lock: waiters are served in arrival order");
    auto* spin = sub->add_flag_callback("--spin", [&run] { run.primitive = Primitive::spin; },
                                        "Take a spin lock: wait by polling with backoff, no pub/sub");
    auto* fenced = sub->add_flag_callback(
        "--fenced", [&run] { run.primitive = Primitive::fenced; },
        "Take a fenced lock and pass its fencing token to COMMAND as HOLDFAST_TOKEN");
    auto* shared = sub->add_flag_callback("-s,--shared", [&run] { run.primitive = Primitive::shared; },
                                          "Take the read side of read-write lock NAME, shared with other readers "
                                          "(like flock -s)");
    auto* exclusive = sub->add_flag_callback("-x,--exclusive", [&run] { run.primitive = Primitive::exclusive; },
                                             "Take the write side of read-write lock NAME (like flock -x)");
    auto* semaphore = sub->add_option_function<std::string>(
                             "--semaphore", [&run](const std::string& text) { run.permits = parse_permits(text); },
                             "Take one of N permits of semaphore NAME instead of a lock (the count is set "
                             "to N if NAME has none); the permit is given back when COMMAND exits")
                          ->type_name("N")
                          ->check(permits_check);
    const std::vector<CLI::Option*> kinds{fair, spin, fenced, shared, exclusive, semaphore};
    for (auto* a : kinds)
        for (auto* b : kinds)
            if (a != b) a->excludes(b);
    sub->add_option_function<std::string>(
           "--signal",
           [&run](const std::string& text) {
               run.stop_signal = *parse_signal(text);
           },
           "What the command's process group gets when the hold is lost or holdfast dies, as timeout -s: "
           "--signal INT [TERM]")
        ->type_name("SIG")
        ->check(CLI::Validator(
            [](std::string& text) {
                return parse_signal(text) ? std::string() : "'" + text + "' is no signal (e.g. TERM, INT, KILL, 9)";
            },
            ""));
    add_duration(*sub, "--kill-after", run.kill_after,
                 "Then SIGKILL to the group if the command still runs this long after the signal (or after a "
                 "signal passed on to it), as timeout -k: --kill-after 30s (default: never)",
                 duration_at_least(0ms, ""));
    sub->add_option("COMMAND", run.command, "The command and its arguments; put -- before it")->required();
    sub->footer(run_footer);
    return sub;
}

CLI::App* add_status(CLI::App& app, StatusOptions& status) {
    auto* sub = app.add_subcommand(
        "status", "Print what NAME holds: a lock's holders and lease, a read-write lock's mode, a fair lock's queue, "
                  "a fencing token, a semaphore's permits, a latch's count, a simple lock's token");
    sub->add_option("NAME", status.name, "Lock (or semaphore, latch) name")->required()->check(non_empty);
    sub->add_flag("--json", status.json, "Print one JSON object (fields: docs/cli.md)");
    return sub;
}

CLI::App* add_list(CLI::App& app, ListOptions& list) {
    auto* sub = app.add_subcommand(
        "list", "List the locks, semaphores and latches whose names match PATTERN, found with SCAN (never KEYS)");
    sub->add_option("PATTERN", list.pattern, "A glob, as SCAN MATCH reads it")->capture_default_str()->check(non_empty);
    sub->add_flag("--json", list.json, "Print one JSON array of objects as status --json prints them");
    return sub;
}

CLI::App* add_unlock(CLI::App& app, UnlockOptions& unlock) {
    auto* sub = app.add_subcommand("unlock", "Delete lock NAME whoever holds it (requires --force)");
    sub->add_option("NAME", unlock.name, "Lock name")->required()->check(non_empty);
    sub->add_flag("--force", unlock.force, "Yes, delete it: its holder is not told and may still believe it holds it");
    sub->add_option_function<std::string>(
           "--permits", [&unlock](const std::string& text) { unlock.permits = parse_permits(text); },
           "A semaphore: after taking back its permits, set its free count to N: --permits 4")
        ->type_name("N")
        ->check(permits_check);
    return sub;
}

// Parse errors print the way CLI11 does, with our prefix and a hint for the
// commonest mistake: command options read as holdfast's.
std::string failure_message(const CLI::App* app, const CLI::Error& error) {
    std::string text = "holdfast: " + std::string(error.what()) + '\n';
    // CLI11 reports an unknown subcommand as a missing one: name it.
    const auto left = app->remaining();
    const auto chosen = app->get_subcommands();
    if (dynamic_cast<const CLI::RequiredError*>(&error) && chosen.empty() && !left.empty())
        text = "holdfast: unknown command '" + left.front() + "'; the commands are run, status, list and unlock\n";
    if (dynamic_cast<const CLI::ExtrasError*>(&error) && !chosen.empty() && chosen.front()->get_name() == "run")
        text += "If they belong to the command, put -- before it: holdfast run NAME -- COMMAND ARGS...\n";
    return text + "Run with --help for more information.\n";
}

}  // namespace
}  // namespace holdfast::cli

int main(int argc, char** argv) {
    namespace cli = holdfast::cli;
    cli::GlobalOptions global;
    cli::RunOptions run;
    cli::UnlockOptions unlock;
    cli::StatusOptions status;
    cli::ListOptions list;

    CLI::App app(cli::description, "holdfast");
    app.require_subcommand(1);
    app.fallthrough();  // global options may follow the subcommand
    app.footer(cli::exit_codes);
    app.failure_message(cli::failure_message);
    app.set_version_flag("--version", "holdfast " HOLDFAST_VERSION_STRING);
    cli::add_global_options(app, global);
    auto* run_command = cli::add_run(app, run);
    auto* status_command = cli::add_status(app, status);
    auto* list_command = cli::add_list(app, list);
    cli::add_unlock(app, unlock);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? cli::exit_code::ok : cli::exit_code::usage;  // 0: --help
    }

    try {
        if (run_command->parsed()) return cli::run(global, run);
        if (status_command->parsed()) return cli::status(global, status);
        if (list_command->parsed()) return cli::list(global, list);
        return cli::unlock(global, unlock);
    } catch (const cli::UsageError& e) {
        cli::warn(e.what());
        return cli::exit_code::usage;
    } catch (const holdfast::ConnectionError& e) {
        cli::warn(cli::describe(e));
        return cli::exit_code::unavailable;
    } catch (const std::exception& e) {
        cli::warn(cli::describe(e));
        return cli::exit_code::failure;
    }
}
