// holdfast run killed with SIGKILL: its command must not go on running
// unprotected while the next holder of the lock runs beside it.
#include "cli/cli_process.hpp"

namespace holdfast::testing {
namespace {

using CliParentDeath = CliTest;

TEST_F(CliParentDeath, TheCommandIsStoppedBeforeTheNextHolderRuns) {
    auto first = start({"--watchdog-timeout", "1s", "run", "k9", "--", "sh", "-c",
                        "echo $$ > " + path("pid") + "; exec sleep 100"});
    ASSERT_TRUE(eventually([&] { return read_file(path("pid")).ends_with('\n'); })) << first->err();
    const pid_t command = std::stoi(read_file(path("pid")));
    ASSERT_TRUE(running(command));

    ::kill(first->pid(), SIGKILL);
    EXPECT_EQ(first->wait().status, 128 + SIGKILL);
    // The next holder gets in once the 1 s lease runs out; its command notes
    // whether the first one was still running then.
    const std::string stat = "/proc/" + std::to_string(command) + "/stat";
    auto second = start({"run", "k9", "--", "sh", "-c", "cat " + stat + " > " + path("seen") + " 2>/dev/null; true"});
    EXPECT_TRUE(eventually([&] { return !running(command); }, 10s)) << "the command outlived its holdfast";
    const auto result = second->wait();
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_TRUE(fs::exists(path("seen")));
    EXPECT_FALSE(running_per(read_file(path("seen")))) << "the next holder ran beside the first command";
    if (running(command)) ::kill(command, SIGKILL);
}

}  // namespace
}  // namespace holdfast::testing
