#include "ceiling.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "holdfast_scripts.hpp"
#include "sync_redis.hpp"

namespace holdfast::bench {
namespace {

// redis-benchmark replaces each __rand_int__ with a 12-digit number below this.
constexpr long keyspace = 100'000;
constexpr const char* owner = "bench-owner:1";
constexpr const char* lease_ms = "30000";
// Release keys start with this hold count, so every release in the run takes
// the owner's path (hexists, hincrby, pexpire) instead of the cheap not-owner one.
constexpr const char* deep_hold = "1000000000000000";

// Writes the hold that the release runs decrement, one hash per possible key
// (KEYS[1] is the key prefix: in a cluster it routes the script to the slot).
constexpr const char* populate_lua =
    "for i = 0, tonumber(ARGV[1]) - 1 do "
    "redis.call('hset', KEYS[1] .. string.format(':release:%012d', i), ARGV[2], ARGV[3]) end";

// Runs argv with stdout captured; throws if it cannot start or exits non-zero.
std::string run_capture(const std::vector<std::string>& argv) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    std::fflush(nullptr);  // the child must not repeat our buffered output
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        ::dup2(fds[1], STDOUT_FILENO);
        ::close(fds[0]);
        ::close(fds[1]);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        std::_Exit(127);
    }
    ::close(fds[1]);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error(argv[0] + " failed (status " + std::to_string(status) + "); is redis-tools installed?");
    return out;
}

// Splits one CSV line of quoted fields.
std::vector<std::string> csv_fields(const std::string& line) {
    std::vector<std::string> fields;
    std::string field;
    bool quoted = false;
    for (char c : line) {
        if (c == '"') quoted = !quoted;
        else if (c == ',' && !quoted) fields.push_back(std::move(field)), field.clear();
        else if (c != '\r') field += c;
    }
    fields.push_back(field);
    return fields;
}

// redis-benchmark --csv prints a header line and one row per test.
BenchRun parse_csv(const std::string& out) {
    std::istringstream in(out);
    std::string header_line, row_line;
    while (std::getline(in, header_line) && header_line.find("\"rps\"") == std::string::npos) {
    }
    if (!std::getline(in, row_line)) throw std::runtime_error("redis-benchmark printed no CSV row:\n" + out);
    const auto header = csv_fields(header_line);
    const auto row = csv_fields(row_line);
    std::map<std::string, double> values;
    for (std::size_t i = 1; i < header.size() && i < row.size(); ++i) values[header[i]] = std::stod(row[i]);
    if (!values.count("rps") || !values.count("p50_latency_ms"))
        throw std::runtime_error("redis-benchmark CSV lacks rps or p50_latency_ms:\n" + out);
    return {values["rps"], values["p50_latency_ms"], values["p99_latency_ms"]};
}

BenchRun run_benchmark(const CeilingTarget& target, long requests, bool pipelined,
                       const std::vector<std::string>& command) {
    std::vector<std::string> argv{"redis-benchmark", "-h", "127.0.0.1", "-p", std::to_string(target.port),
                                  "-n", std::to_string(requests), "-r", std::to_string(keyspace), "--csv"};
    argv.insert(argv.end(), target.benchmark_args.begin(), target.benchmark_args.end());
    const std::vector<std::string> load = pipelined ? std::vector<std::string>{"-c", "50", "-P", "16"}
                                                    : std::vector<std::string>{"-c", "1"};
    argv.insert(argv.end(), load.begin(), load.end());
    argv.insert(argv.end(), command.begin(), command.end());
    return parse_csv(run_capture(argv));
}

// SCRIPT LOAD returns the SHA1 the server will know it by; it must match ours.
std::string load_script(support::SyncRedis& raw, const detail::Script& script) {
    const std::string sha = raw.string({"SCRIPT", "LOAD", script.body});
    if (sha != script.sha1)
        throw std::runtime_error(std::string("SCRIPT LOAD of ") + script.name + " gave " + sha + ", embedded SHA1 is " +
                                 script.sha1);
    return sha;
}

}  // namespace

Ceiling measure_ceiling(std::uint16_t plain_port, const Durations& durations, const CeilingTarget& target_in) {
    CeilingTarget target = target_in;
    if (target.port == 0) target.port = plain_port;
    const std::string tag = target.hash_tag.empty() ? "bench" : target.hash_tag;
    const std::string prefix = target.hash_tag.empty() ? "bench" : "{" + tag + "}";
    support::SyncRedis raw(plain_port);
    // The bench's user may run everything, so the client runs the acquire's
    // trusted twin (docs/errors.md, "ACL rules holdfast needs"): so does the ceiling.
    const std::string acquire_sha = load_script(raw, *scripts::lock_acquire.trusted);
    const std::string release_sha = load_script(raw, scripts::lock_release);
    if (target.release)
        raw.string({"EVAL", populate_lua, "1", prefix, std::to_string(keyspace), owner, deep_hold});

    // As lock/kind.cpp calls them for lock() and unlock(): acquire KEYS =
    // name, ARGV = lease, owner, channel, "publish", "" (a first attempt lists
    // no waiter), the waiters and promise keys; release KEYS = name, ARGV =
    // "0", lease, owner, "publish", channel, the promise ms, the waiters and
    // promise keys (without the trailing cluster flag: these calls list no
    // waiter and name none, so never reach what it guards).
    const std::string channel = "redisson_lock__channel:{" + tag + "}";
    const std::string waiters = "holdfast_lock_waiters:{" + tag + "}", promise = "holdfast_lock_handoff:{" + tag + "}";
    const std::vector<std::string> acquire{"EVALSHA", acquire_sha, "1", prefix + ":acquire:__rand_int__", lease_ms,
                                           owner,     channel,     "publish", "", waiters, promise};
    const std::vector<std::string> release{"EVALSHA", release_sha, "1", prefix + ":release:__rand_int__",
                                           "0",       lease_ms,    owner, "publish", channel, "100", waiters, promise};
    Ceiling c;
    c.acquire_pipelined = run_benchmark(target, durations.pipelined_requests, true, acquire);
    if (target.release) c.release_pipelined = run_benchmark(target, durations.pipelined_requests, true, release);
    c.acquire_serial = run_benchmark(target, durations.serial_requests, false, acquire);
    if (target.release) c.release_serial = run_benchmark(target, durations.serial_requests, false, release);
    raw.string({"FLUSHALL"});  // scripts stay cached; only the keys go
    return c;
}

}  // namespace holdfast::bench
