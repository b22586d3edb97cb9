// flock(1)'s and etcdctl lock's habits: -n, -E, -c, the lock named in the
// command's environment, and holding a lock with no command until killed.
#include <nlohmann/json.hpp>

#include <regex>

#include "cli/cli_process.hpp"

namespace holdfast::testing {
namespace {

using CliHabits = CliTest;

TEST_F(CliHabits, NonblockTriesOnce) {
    auto held = hold("job");
    const auto result = holdfast({"run", "-n", "job", "--", "touch", path("marker")});
    EXPECT_EQ(result.status, 75);
    EXPECT_NE(result.err.find("timed out after 0ms waiting for the lock 'job'"), std::string::npos) << result.err;
    EXPECT_FALSE(fs::exists(path("marker")));
    EXPECT_EQ(holdfast({"run", "--nonblock", "job", "--", "true"}).status, 75);
    EXPECT_EQ(holdfast({"run", "-n", "--wait", "1s", "job", "--", "true"}).status, 2);
    held.reset();
    EXPECT_EQ(holdfast({"run", "-n", "job", "--", "touch", path("marker")}).status, 0);
    EXPECT_TRUE(fs::exists(path("marker")));
}

TEST_F(CliHabits, ConflictExitCodeReplaces75) {
    const auto held = hold("job");
    EXPECT_EQ(holdfast({"run", "-n", "-E", "0", "job", "--", "true"}).status, 0);
    EXPECT_EQ(holdfast({"run", "--wait", "100ms", "--conflict-exit-code", "3", "job", "--", "true"}).status, 3);
    const auto bad = holdfast({"run", "-n", "-E", "256", "job", "--", "true"});
    EXPECT_EQ(bad.status, 2);
    EXPECT_EQ(bad.err.find("put -- before it"), std::string::npos) << "-E is holdfast's own: " << bad.err;
}

TEST_F(CliHabits, CommandStringRunsThroughSh) {
    const auto result = holdfast({"run", "job", "-c", "echo \"$HOLDFAST_NAME\" > " + path("name") + " && exit 4"});
    EXPECT_EQ(result.status, 4) << result.err;
    EXPECT_EQ(read_file(path("name")), "job\n");
    EXPECT_EQ(holdfast({"run", "job", "-c", "true", "--", "true"}).status, 2);
}

// The owner in HOLDFAST_OWNER is the field the lock's hash holds; a token an
// outer holdfast run --fenced exported does not leak into a plain lock's command.
TEST_F(CliHabits, TheEnvironmentNamesTheLockAndItsOwner) {
    const std::string script = "echo \"$HOLDFAST_NAME|$HOLDFAST_OWNER|$HOLDFAST_TOKEN\" > " + path("env") + "; " +
                               redis_cli("HKEYS job") + " > " + path("owner");
    const auto result = start({"run", "job", "--", "sh", "-c", script}, {"HOLDFAST_TOKEN=17"})->wait();
    ASSERT_EQ(result.status, 0) << result.err;
    const std::string owner = read_file(path("owner"));
    ASSERT_FALSE(owner.empty());
    EXPECT_EQ(read_file(path("env")), "job|" + owner.substr(0, owner.size() - 1) + "|\n");

    ASSERT_EQ(holdfast({"run", "--semaphore", "1", "pool", "--", "sh", "-c", script}).status, 0);
    const std::string permit = read_file(path("env"));
    EXPECT_TRUE(std::regex_match(permit, std::regex("pool\\|[0-9a-f]{32}\\|\n"))) << permit;
}

TEST_F(CliHabits, WithoutACommandHoldsUntilSignalled) {
    auto holder = start({"run", "job"});
    ASSERT_TRUE(eventually([&] { return holder->out().ends_with('\n'); }, 20s)) << holder->err();
    const std::string line = holder->out();
    const auto tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    EXPECT_EQ(line.substr(0, tab), "job");
    const std::string owner = line.substr(tab + 1, line.size() - tab - 2);
    EXPECT_EQ(raw->string({"HGET", "job", owner}), "1");
    EXPECT_EQ(holdfast({"run", "-n", "job", "--", "true"}).status, 75);
    ::kill(holder->pid(), SIGTERM);
    const auto result = holder->wait();
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);
}

TEST_F(CliHabits, WithoutACommandAFencedLockPrintsItsToken) {
    raw->command({"SET", "redisson_lock_token:{job}", "8000000000000041"});
    auto holder = start({"run", "--fenced", "--json", "job"});
    ASSERT_TRUE(eventually([&] { return holder->out().ends_with('\n'); }, 20s)) << holder->err();
    const auto held = nlohmann::json::parse(holder->out());
    EXPECT_EQ(held["name"], "job");
    EXPECT_EQ(held["token"], 8000000000000042);
    EXPECT_EQ(raw->string({"HGET", "job", held["owner"].get<std::string>()}), "1");
    ::kill(holder->pid(), SIGINT);
    EXPECT_EQ(holder->wait().status, 0);
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);
}

TEST_F(CliHabits, WithoutACommandALostLockExits1) {
    auto holder = start({"--watchdog-timeout", "1500ms", "run", "job"});
    ASSERT_TRUE(eventually([&] { return holder->out().ends_with('\n'); }, 20s)) << holder->err();
    raw->integer({"DEL", "job"});
    const auto result = holder->wait();
    EXPECT_EQ(result.status, 1);
    EXPECT_NE(result.err.find("lost the lock 'job' ("), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("; no longer holding it"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace holdfast::testing
