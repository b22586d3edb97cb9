// Bad-input catalog, the command line: servers it cannot use (exit 69); keys
// that are not locks (exit 1); the longest durations and counts; (missing
// arguments, unknown commands and options, bad durations, names and URLs,
// exit 2, need no server: tests/cli/usage_test.cpp). Each exit comes with one
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

// The longest wait and lease the CLI accepts work end to end (no overflow
// inside the library).
TEST_F(BadInputsCli, TheLongestWaitAndLeaseWork) {
    const std::string script = redis_cli("PTTL job") + " > " + path("ttl");
    const auto result = holdfast({"run", "--wait", "277777h", "--lease", "277777h", "job", "--", "sh", "-c", script});
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_GT(std::stoll(read_file(path("ttl"))), 277776LL * 3600 * 1000);
    expect_no_keys();
}

// A semaphore count is a decimal up to INT64_MAX, stored as such, and 010 is
// ten, not eight (the counts refused: tests/cli/usage_test.cpp, no server).
TEST_F(BadInputsCli, SemaphoreCountsReachInt64AndAreDecimal) {
    const std::string get = redis_cli("GET pool") + " > " + path("count");
    auto result = holdfast({"run", "--semaphore", "9223372036854775807", "pool", "--", "sh", "-c", get});
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(read_file(path("count")), "9223372036854775806\n");
    raw->command({"DEL", "pool"});
    result = holdfast({"run", "--semaphore", "010", "pool", "--", "sh", "-c", get});
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(read_file(path("count")), "9\n");
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
