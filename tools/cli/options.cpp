// holdfast's options, as CLI11 reads them into Options. Every option's help
// ends with an example: the help is also the man page (cmake/ManPage.cmake).
#include "cli/options.hpp"

#include <charconv>
#include <cstdint>
#include <limits>

#include "cli/duration.hpp"
#include "cli/process.hpp"

namespace holdfast::cli {
namespace {

using namespace std::chrono_literals;

constexpr const char* run_footer = R"(Examples:
  holdfast run nightly-report -- ./report.sh --full
  holdfast run -n -E 0 deploy -c 'make deploy'     # busy: skip quietly, as flock -n -E 0
  holdfast run --wait 10s --lease 5m migrate -- ./migrate.sh
  holdfast run --semaphore 4 encoders -- ffmpeg -i in.mov out.mp4
  holdfast run --signal INT --kill-after 30s etl -- ./etl.sh
  holdfast run maintenance &                       # holds until killed, as etcdctl lock NAME
The command runs in a process group of its own. When the lock is lost (not renewed in time,
expired, force-unlocked) or a --lease runs out, the group gets --signal, then SIGKILL after
--kill-after; SIGINT, SIGTERM and SIGHUP sent to holdfast are passed on to the group; if
holdfast dies, even by SIGKILL, a supervisor process signals the group. The command's
environment has HOLDFAST_NAME, HOLDFAST_OWNER (owner id, or a permit's id) and, with --fenced,
HOLDFAST_TOKEN. Without a command, holdfast prints NAME, the owner and (--fenced) the token,
tab-separated on one line, holds until SIGINT, SIGTERM or SIGHUP (then exits 0), and exits 1
if the lock is lost.

flock(1)                     holdfast run
-x, -e, --exclusive          -x (write side of a read-write lock), or a plain lock
-s, --shared                 -s
-n, --nonblock               -n
-w, --timeout SECONDS        -w, --wait DURATION (holdfast's --timeout is for Redis)
-E, --conflict-exit-code N   -E N
-c, --command STRING         -c STRING
-o, -F, -u, FILE, FD         none: no lock file
timeout -s SIG, -k DURATION  --signal SIG, --kill-after DURATION

etcdctl lock                 holdfast run
NAME COMMAND ARGS...         NAME -- COMMAND ARGS...
NAME (prints the key, holds) NAME (prints name, owner, token; holds)
--ttl SECONDS                --watchdog-timeout DURATION (renewed), --lease DURATION
--endpoints URLS             --url URL, --url-file FILE, HOLDFAST_URL
--user, --password           user:password in the URL
--cacert, --cert, --key      --tls-ca, --tls-cert, --tls-key
--dial-timeout, --command-timeout   --timeout
ETCD_LOCK_KEY, ETCD_LOCK_REV HOLDFAST_NAME, HOLDFAST_OWNER, HOLDFAST_TOKEN (--fenced))";

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

// --semaphore N, --permits N: decimal, 1 (or 0) to INT64_MAX. Not CLI11's
// integer option, which reads 010 as octal and turns a number beyond INT64
// into INT64_MAX.
std::optional<std::int64_t> count_of(const std::string& text, std::int64_t least, std::string& why) {
    std::int64_t n = 0;
    const char* end = text.data() + text.size();
    const auto [stop, ec] = std::from_chars(text.data(), end, n);
    const std::string largest = std::to_string(std::numeric_limits<std::int64_t>::max());
    if (!text.empty() && text.front() != '-' && stop == end && ec == std::errc::result_out_of_range) {
        why = "'" + text + "' is beyond the largest count a semaphore holds, " + largest +
              " (Redis counts in 64-bit integers)";
    } else if (text.empty() || stop != end || ec != std::errc() || n < least) {
        why = "'" + text + "' is not a count of permits: give a whole number from " + std::to_string(least) + " to " +
              largest;
    } else {
        return n;
    }
    return std::nullopt;
}

// Adds a count option (`least` and up) stored in `target`.
CLI::Option* add_count(CLI::App& app, const std::string& flags, std::optional<std::int64_t>& target,
                       std::int64_t least, const std::string& help) {
    return app
        .add_option_function<std::string>(
            flags,
            [&target, least](const std::string& text) {
                std::string why;
                target = count_of(text, least, why);
            },
            help)
        ->type_name("N")
        ->check(CLI::Validator(
            [least](std::string& text) {
                std::string why;
                count_of(text, least, why);
                return why;
            },
            ""));
}

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

CLI::Option* add_file(CLI::App& app, const std::string& flags, std::string& target, const std::string& help) {
    return app.add_option(flags, target, help)
        ->type_name("FILE")
        ->check(CLI::Validator(CLI::ExistingFile).description(""));
}

void add_global_options(CLI::App& app, GlobalOptions& global) {
    auto* url = app.add_option_function<std::string>(
                       "--url", [&global](const std::string& text) { global.url = text; },
                       "Redis server: redis://[user:password@]host[:port][/db], "
                       "unix://[[user]:password@]/path.sock[?db=N&password=P&username=U], "
                       "redis-sentinel://[user:password@]host[:port][,host[:port]...][/db]"
                       "[?sentinel_password=P&sentinel_username=U]#MASTER (user:password: the master's) or "
                       "redis-cluster://[user:password@]host:port[,host:port...]; rediss://, rediss-sentinel:// "
                       "and rediss-cluster:// for TLS. Default: $HOLDFAST_URL, else $REDIS_URL, else "
                       "redis://127.0.0.1:6379. A password here shows in ps (holdfast warns of it): use "
                       "HOLDFAST_URL or --url-file. --url redis://redis.internal:6379/2")
                   ->type_name("URL");
    add_file(app, "--url-file", global.url_file,
             "Read the URL from the first line of FILE, keeping its password off the command line (chmod 600 "
             "it: holdfast warns of a password others can read): "
             "--url-file /etc/holdfast/url")
        ->excludes(url);
    add_duration(app, "--timeout", global.timeout,
                 "How long connecting to Redis, and each reply, may take before holdfast gives up (exit 69) [3s]: "
                 "--timeout 10s",
                 duration_at_least(1ms, "is not a timeout: it must be greater than 0"));
    add_file(app, "--tls-ca", global.tls_ca,
             "TLS: trust the CA certificates in FILE (PEM) instead of the system's: --tls-ca /etc/redis/ca.pem");
    add_file(app, "--tls-cert", global.tls_cert,
             "TLS: present the client certificate in FILE (PEM): --tls-cert client.pem --tls-key client.key");
    add_file(app, "--tls-key", global.tls_key, "TLS: the private key of --tls-cert (PEM): --tls-key client.key");
    app.add_option("--tls-server-name", global.tls_server_name,
                   "TLS: the name the server's certificate must carry (and SNI), when it is not the host "
                   "connected to: --tls-server-name redis.internal")
        ->type_name("NAME");
    app.add_flag("-v,--verbose", global.verbose,
                 "Log the client's events to stderr: servers connected to (and what runs there), connections lost "
                 "and restored, failed renewals, lost leases, slow acquires, reloaded scripts: -v");
    add_duration(app, "--watchdog-timeout", global.watchdog_timeout,
                 "Lease of a lock (or permit) taken without --lease, renewed every third of it [30s]: "
                 "--watchdog-timeout 10s",
                 duration_at_least(3ms, "is below the minimum of 3ms"));
    add_duration(app, "--fair-lock-wait-timeout", global.fair_lock_wait_timeout,
                 "A fair lock waiter's budget in its queue's deadlines (Redisson's fairLockWaitTimeout), which "
                 "every client of the queue must share [5m]: --fair-lock-wait-timeout 20s",
                 duration_at_least(1ms, "must be greater than 0"));
}

// The run options that choose what to take.
void add_kinds(CLI::App& sub, RunOptions& run) {
    auto kind = [&](const std::string& flags, Primitive primitive, const std::string& help) {
        return sub.add_flag_callback(flags, [&run, primitive] { run.primitive = primitive; }, help);
    };
    const std::vector<CLI::Option*> kinds{
        kind("--fair", Primitive::fair, "Take a fair lock: waiters are served in arrival order: --fair"),
        kind("--spin", Primitive::spin, "Take a spin lock: wait by polling with backoff, no pub/sub: --spin"),
        kind("--fenced", Primitive::fenced,
             "Take a fenced lock and pass its fencing token to COMMAND as HOLDFAST_TOKEN: --fenced"),
        kind("-s,--shared", Primitive::shared,
             "Take the read side of read-write lock NAME, shared with other readers, as flock -s: -s"),
        kind("-x,--exclusive", Primitive::exclusive, "Take the write side of read-write lock NAME, as flock -x: -x"),
        add_count(sub, "--semaphore", run.permits, 1,
                  "Take one of N permits of semaphore NAME instead of a lock (the count is set to N if NAME has "
                  "none); leased like a lock, given back when COMMAND exits: --semaphore 4"),
    };
    for (auto* a : kinds)
        for (auto* b : kinds)
            if (a != b) a->excludes(b);
}

CLI::App* add_run(CLI::App& app, RunOptions& run) {
    auto* sub = app.add_subcommand(
        "run", "Take lock NAME, run COMMAND in a process group of its own while holding it, release it when "
               "COMMAND exits; without COMMAND, hold NAME until killed");
    sub->add_option("NAME", run.name, "Lock name")->required()->check(non_empty);
    add_duration(*sub, "--lease", run.lease,
                 "Hold the lock for this long, not renewed (default: renewed while COMMAND runs): --lease 5m",
                 duration_at_least(1ms, "is not a lease: it must be greater than 0"));
    auto* wait = add_duration(*sub, "-w,--wait", run.wait,
                              "Give up after this long and exit 75 (or -E) without running COMMAND, as flock -w "
                              "(default: wait as long as it takes): --wait 10s",
                              duration_at_least(0ms, ""));
    sub->add_flag_callback("-n,--nonblock", [&run] { run.wait = Duration::zero(); },
                           "Try once: exit 75 (or -E) at once if NAME is taken, as flock -n; same as --wait 0: -n")
        ->excludes(wait);
    sub->add_option("-E,--conflict-exit-code", run.conflict_exit_code,
                    "The exit code when --wait or -n runs out, as flock -E [75]: -E 0")
        ->type_name("N")
        ->check(CLI::Range(0, 255).description(""));
    add_kinds(*sub, run);
    sub->add_option_function<std::string>(
           "--signal", [&run](const std::string& text) { run.stop_signal = *parse_signal(text); },
           "What COMMAND's process group gets when the hold is lost or holdfast dies, as timeout -s [TERM]: "
           "--signal INT")
        ->type_name("SIG")
        ->check(CLI::Validator(
            [](std::string& text) {
                return parse_signal(text) ? std::string() : "'" + text + "' is no signal (e.g. TERM, INT, KILL, 9)";
            },
            ""));
    add_duration(*sub, "--kill-after", run.kill_after,
                 "Then SIGKILL to the group if COMMAND still runs this long after the signal (or after a signal "
                 "passed on to it), as timeout -k (default: never): --kill-after 30s",
                 duration_at_least(0ms, ""));
    sub->add_flag("--json", run.json,
                  "Without COMMAND, print what is held as one JSON object (name, owner, token); errors as "
                  "JSON on stdout: --json");
    auto* command = sub->add_option("COMMAND", run.command,
                                    "The command and its arguments, after --: -- ./report.sh --full");
    sub->add_option_function<std::string>(
           "-c,--command", [&run](const std::string& text) { run.command = {"/bin/sh", "-c", text}; },
           "Run STRING with /bin/sh -c, as flock -c: -c 'make deploy && make smoke-test'")
        ->type_name("STRING")
        ->excludes(command);
    sub->footer(run_footer);
    return sub;
}

CLI::App* add_status(CLI::App& app, StatusOptions& status) {
    auto* sub = app.add_subcommand(
        "status", "Print what each NAME holds: a lock's holders and lease, a read-write lock's mode, a fair lock's "
                  "queue, a fencing token, a semaphore's permits, a latch's count, a simple lock's token");
    sub->add_option("NAME", status.names, "Lock (or semaphore, latch) names: status deploy nightly-report")
        ->required()
        ->check(non_empty);
    sub->add_flag("--json", status.json, "Print one JSON object per NAME, one per line (fields: docs/cli.md): --json");
    return sub;
}

CLI::App* add_list(CLI::App& app, ListOptions& list) {
    auto* sub = app.add_subcommand(
        "list", "List the locks, semaphores and latches whose names match PATTERN, found with SCAN (never KEYS)");
    sub->add_option("PATTERN", list.pattern, "A glob, as SCAN MATCH reads it: list 'deploy:*'")
        ->capture_default_str()
        ->check(non_empty);
    sub->add_flag("--json", list.json, "Print one JSON array of objects as status --json prints them: --json");
    return sub;
}

CLI::App* add_unlock(CLI::App& app, UnlockOptions& unlock) {
    auto* sub = app.add_subcommand(
        "unlock", "Delete lock NAME whoever holds it, or take back the permits of semaphore NAME (requires --force)");
    sub->add_option("NAME", unlock.name, "Lock (or semaphore) name")->required()->check(non_empty);
    sub->add_flag("--force", unlock.force,
                  "Yes, delete it: its holder is not told and may still believe it holds it: --force");
    add_count(*sub, "--permits", unlock.permits, 0,
              "A semaphore: after taking back its permits, set its free count to N: --permits 4");
    sub->add_flag("--json", unlock.json, "Print what was done as one JSON object (fields: docs/cli.md): --json");
    return sub;
}

}  // namespace

Subcommands add_options(CLI::App& app, Options& options) {
    add_global_options(app, options.global);
    return {add_run(app, options.run), add_status(app, options.status), add_list(app, options.list),
            add_unlock(app, options.unlock)};
}

}  // namespace holdfast::cli
