// Bad-input catalog, the command line: missing arguments, unknown commands
// and options, bad durations, names and URLs (exit 2); servers it cannot use
// (exit 69); keys that are not locks (exit 1). Each exit comes with one
// "holdfast: " line naming what was wrong, and leaves no key behind.
#include "bad_inputs/bad_inputs.hpp"
#include "cli/cli_process.hpp"

namespace holdfast::testing {
namespace {

using Args = std::vector<std::string>;

class BadInputsCli : public CliTest {
protected:
    /// Runs holdfast with exactly `args` (no --url added).
    Finished bare(const Args& args) { return Cli(args, dir, {}).wait(); }
    std::string server_name() const { return "127.0.0.1:" + std::to_string(server->port()); }

    /// Exit `status`, and stderr starting "holdfast: " and mentioning `parts`.
    void expect_failure(const Finished& result, int status, const std::vector<std::string>& parts) {
        EXPECT_EQ(result.status, status) << result.err;
        EXPECT_TRUE(result.err.starts_with("holdfast: ")) << result.err;
        EXPECT_TRUE(mentions(result.err, parts));
    }
    void expect_no_keys() { EXPECT_EQ(raw->integer({"DBSIZE"}), 0); }
};

TEST_F(BadInputsCli, MissingArgumentsExit2) {
    const std::pair<Args, std::string> cases[] = {
        {{}, "A subcommand is required"},
        {{"run"}, "NAME is required"},
        {{"run", "job", "-c"}, "--command"},
        {{"status"}, "NAME is required"},
        {{"unlock", "--force"}, "NAME is required"},
        {{"run", "--wait"}, "--wait"},
    };
    for (const auto& [args, why] : cases) expect_failure(holdfast(args), 2, {why, "--help"});
    expect_no_keys();
}

TEST_F(BadInputsCli, AnUnknownSubcommandOrOptionExits2) {
    expect_failure(holdfast({"frobnicate", "job"}), 2, {"frobnicate"});
    expect_failure(holdfast({"run", "--nope", "job", "--", "true"}), 2, {"--nope"});
    expect_failure(holdfast({"status", "--force", "job"}), 2, {"--force"});
    expect_no_keys();
}

TEST_F(BadInputsCli, BadDurationsExit2NamingTheValue) {
    const std::pair<Args, std::vector<std::string>> cases[] = {
        {{"--wait", "1.5q"}, {"bad duration '1.5q'", "unknown unit 'q'"}},
        {{"--wait", "-1s"}, {"bad duration '-1s'", "does not start with a number"}},
        {{"--wait", "abc"}, {"bad duration 'abc'"}},
        {{"--wait", ""}, {"bad duration ''"}},
        {{"--wait", "1..2s"}, {"bad duration '1..2s'", "malformed number"}},
        {{"--wait", "1e3"}, {"bad duration '1e3'", "unknown unit 'e3'"}},
        {{"--wait", "99999999999h"}, {"bad duration '99999999999h'", "too long"}},
        {{"--lease", "0"}, {"'0' is not a lease"}},
        {{"--lease", "0ms"}, {"'0ms' is not a lease"}},
        {{"--lease", "999999999999999999999999s"}, {"too long"}},
    };
    for (const auto& [option, why] : cases) {
        Args args{"run"};
        args.insert(args.end(), option.begin(), option.end());
        args.insert(args.end(), {"job", "--", "touch", path("ran")});
        expect_failure(holdfast(args), 2, why);
    }
    expect_failure(holdfast({"--watchdog-timeout", "2ms", "status", "job"}), 2, {"'2ms' is below the minimum of 3ms"});
    expect_failure(holdfast({"--watchdog-timeout", "100000000h", "status", "job"}), 2, {"too long"});
    EXPECT_FALSE(fs::exists(path("ran")));
    expect_no_keys();
}

// The longest wait and lease the CLI accepts work end to end (no overflow
// inside the library).
TEST_F(BadInputsCli, TheLongestWaitAndLeaseWork) {
    const std::string script = redis_cli("PTTL job") + " > " + path("ttl");
    const auto result = holdfast({"run", "--wait", "277777h", "--lease", "277777h", "job", "--", "sh", "-c", script});
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_GT(std::stoll(read_file(path("ttl"))), 277776LL * 3600 * 1000);
    expect_no_keys();
}

// A semaphore count is a decimal from 1 to INT64_MAX: one beyond is refused,
// not turned into INT64_MAX, and 010 is ten, not eight.
TEST_F(BadInputsCli, SemaphoreCountsBeyondInt64AreRefused) {
    const std::pair<std::string, std::vector<std::string>> cases[] = {
        {"9223372036854775808", {"--semaphore: '9223372036854775808' is beyond the largest count", "9223372036854775807"}},
        {"99999999999999999999", {"beyond the largest count"}},
        {"0", {"'0' is not a count of permits", "from 1 to 9223372036854775807"}},
        {"-1", {"'-1' is not a count"}},
        {"0x10", {"'0x10' is not a count"}},
        {"1e3", {"'1e3' is not a count"}},
        {"", {"'' is not a count"}},
    };
    for (const auto& [count, why] : cases)
        expect_failure(holdfast({"run", "--semaphore", count, "pool", "--", "touch", path("ran")}), 2, why);
    EXPECT_FALSE(fs::exists(path("ran")));
    expect_no_keys();
    const std::string get = redis_cli("GET pool") + " > " + path("count");
    auto result = holdfast({"run", "--semaphore", "9223372036854775807", "pool", "--", "sh", "-c", get});
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(read_file(path("count")), "9223372036854775806\n");
    raw->command({"DEL", "pool"});
    result = holdfast({"run", "--semaphore", "010", "pool", "--", "sh", "-c", get});
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(read_file(path("count")), "9\n");
}

TEST_F(BadInputsCli, AnEmptyNameExits2) {
    for (const char* command : {"run", "status", "unlock"}) {
        Args args{command, "--force", ""};
        if (std::string(command) != "unlock") args = {command, ""};
        if (std::string(command) == "run") args.insert(args.end(), {"--", "true"});
        expect_failure(holdfast(args), 2, {"a lock name must not be empty"});
    }
    expect_no_keys();
}

TEST_F(BadInputsCli, BadUrlsExit2) {
    expect_failure(bare({"--url", "nope://x", "status", "job"}), 2, {"bad Redis URI 'nope://x'", "unknown scheme"});
    expect_failure(bare({"--url", "redis://h:99999", "status", "job"}), 2, {"'redis://h:99999'", "out of range"});
    expect_failure(bare({"--url", "", "status", "job"}), 2, {"bad Redis URI ''"});
    // TLS files are for a TLS URL.
    expect_failure(bare({"--url", "redis://h", "--tls-ca", "/dev/null", "status", "job"}), 2, {"rediss://"});
}

TEST_F(BadInputsCli, AServerItCannotUseExits69NamingIt) {
    const support::ClosedPort closed;
    const std::string nobody = "127.0.0.1:" + std::to_string(closed.port());
    expect_failure(bare({"--url", "redis://" + nobody, "run", "job", "--", "touch", path("ran")}), 69,
                   {nobody, "is the server running"});
    expect_failure(bare({"--url", "redis://:wrong@" + server_name(), "status", "job"}), 69,
                   {server_name(), "AUTH refused", "password"});
    FakeServer web = FakeServer::http();
    expect_failure(bare({"--url", "redis://" + web.name(), "status", "job"}), 69,
                   {web.name(), "is this a Redis server?"});
    EXPECT_FALSE(fs::exists(path("ran")));
    expect_no_keys();
}

TEST_F(BadInputsCli, AKeyThatIsNotALockExits1AndIsLeftAlone) {
    raw->command({"RPUSH", "job", "a", "b"});
    const std::vector<std::string> why{"'job'", server_name(), "the key holds a list, not a lock",
                                       "pick another name or delete the key"};
    expect_failure(holdfast({"run", "job", "--", "touch", path("ran")}), 1, why);
    expect_failure(holdfast({"run", "--wait", "10s", "job", "--", "touch", path("ran")}), 1, why);
    expect_failure(holdfast({"status", "job"}), 1, why);
    expect_failure(holdfast({"unlock", "--force", "job"}), 1, why);
    EXPECT_FALSE(fs::exists(path("ran")));
    EXPECT_EQ(raw->integer({"LLEN", "job"}), 2);
    EXPECT_EQ(raw->integer({"DBSIZE"}), 1);
}

TEST_F(BadInputsCli, ACommandThatDoesNotExistExits127AndReleases) {
    expect_failure(holdfast({"run", "job", "--", path("no-such-command")}), 127, {"command not found"});
    expect_no_keys();
}

}  // namespace
}  // namespace holdfast::testing
