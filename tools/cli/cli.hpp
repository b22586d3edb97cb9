// What the command line asked for, the exit codes, and the commands that act on it.
#pragma once

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "holdfast/config.hpp"

namespace holdfast::cli {

using Duration = std::chrono::milliseconds;

/// Exit codes of holdfast's own outcomes; `run` otherwise exits with the command's.
namespace exit_code {
constexpr int ok = 0;
constexpr int failure = 1;         // a server or lock error (wrong key type, ...)
constexpr int usage = 2;           // bad arguments, or unlock without --force
constexpr int unavailable = 69;    // EX_UNAVAILABLE: Redis unreachable or refused the credentials
constexpr int timed_out = 75;      // EX_TEMPFAIL: --wait ran out, as flock -w does
constexpr int cannot_execute = 126;
constexpr int not_found = 127;
constexpr int signal_base = 128;   // 128 + signal number, as a shell reports it
}  // namespace exit_code

/// Bad input found after parsing; exits with exit_code::usage.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct GlobalOptions {
    std::optional<std::string> url;            // nullopt: --url-file, HOLDFAST_URL, REDIS_URL, or localhost
    std::string url_file;                      // --url-file: the URL on its first line
    std::optional<Duration> watchdog_timeout;  // nullopt: the library's default (30 s)
    std::optional<Duration> fair_lock_wait_timeout;  // nullopt: the URL's, else the library's (5 min)
    std::optional<Duration> timeout;           // --timeout: connecting, and each reply (nullopt: 3 s)
    std::string tls_ca, tls_cert, tls_key;     // empty: the system's CAs, no client certificate
    std::string tls_server_name;               // empty: the host connected to
    bool verbose = false;                      // -v: the client's events on stderr
};

/// Which member of the lock family `run` takes.
enum class Primitive { lock, fair, spin, fenced, shared, exclusive };

struct RunOptions {
    std::string name;
    Primitive primitive = Primitive::lock;
    std::optional<Duration> lease;  // nullopt: renewed while the command runs
    std::optional<Duration> wait;   // nullopt: wait as long as it takes
    int conflict_exit_code = exit_code::timed_out;  // -E: when the wait runs out
    std::optional<std::int64_t> permits;  // --semaphore N: a permit of a semaphore of N, not a lock
    int stop_signal = SIGTERM;            // --signal: to the command's group when the hold is lost
    std::optional<Duration> kill_after;   // --kill-after: then SIGKILL
    std::vector<std::string> command;     // empty: hold until signalled
    bool json = false;                    // the held line and errors as JSON
};

struct StatusOptions {
    std::vector<std::string> names;
    bool json = false;
};

struct ListOptions {
    std::string pattern = "*";
    bool json = false;
};

struct UnlockOptions {
    std::string name;
    bool force = false;
    std::optional<std::int64_t> permits;  // --permits N: a semaphore's count after the repair
    bool json = false;
};

/// One line on stderr, "holdfast: <message>". One stdio call, so a line
/// written from the client's thread never interleaves with another.
inline void warn(const std::string& message) { std::fprintf(stderr, "holdfast: %s\n", message.c_str()); }

/// Set once, by --json, before the subcommand runs: errors are then also JSON on stdout.
inline bool json_errors = false;

/// Reports the error that ends holdfast: one line on stderr and, with --json,
/// {"error":{"exit_code":N,"message":"..."}} on stdout. Returns `code`.
int fail(int code, const std::string& message);
/// The JSON line alone.
void print_json_error(int code, const std::string& message);

/// An exception's message without the library's own "holdfast: " prefix.
inline std::string describe(const std::exception& error) {
    constexpr std::string_view prefix = "holdfast: ";
    std::string_view text = error.what();
    if (text.starts_with(prefix)) text.remove_prefix(prefix.size());
    return std::string(text);
}

/// The client configuration the options describe; throws UsageError on a bad URL.
Config make_config(const GlobalOptions& options);

int run(const GlobalOptions& global, const RunOptions& options);
int status(const GlobalOptions& global, const StatusOptions& options);
int list(const GlobalOptions& global, const ListOptions& options);
int unlock(const GlobalOptions& global, const UnlockOptions& options);

}  // namespace holdfast::cli
