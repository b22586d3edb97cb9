// holdfast run runs its command in a process group of its own and signals the
// whole group: a process the command started in the background stops with it
// when the lock is lost, when holdfast is told to stop, and when holdfast is
// killed with -9. --signal and --kill-after choose how, as timeout(1)'s do.
#include "cli/cli_process.hpp"

namespace holdfast::testing {
namespace {

using CliProcessGroup = CliTest;

// A command whose shell starts `sleep 100` in the background and waits for
// it: the sleep is the command's child, holdfast's grandchild.
std::vector<std::string> with_grandchild(std::vector<std::string> args, const std::string& dir,
                                         const std::string& shell_prefix = "") {
    args.insert(args.end(), {"--", "sh", "-c",
                             shell_prefix + "echo $$ > " + dir + "/leader; sleep 100 & echo $! > " + dir +
                                 "/grandchild; wait"});
    return args;
}

// Kills what a failed test left running.
struct Reaper {
    std::vector<pid_t> pids;
    ~Reaper() {
        for (pid_t pid : pids)
            if (pid > 0 && running(pid)) ::kill(pid, SIGKILL);
    }
};

TEST_F(CliProcessGroup, ALostLockStopsTheGrandchildToo) {
    auto cli = start(with_grandchild({"--watchdog-timeout", "1500ms", "run", "job"}, dir.string()));
    Reaper left{{written_pid("leader", *cli), written_pid("grandchild", *cli)}};
    const pid_t grandchild = left.pids[1];
    ASSERT_TRUE(running(grandchild));
    EXPECT_EQ(::getpgid(grandchild), left.pids[0]) << "the command leads a process group of its own";
    EXPECT_NE(::getpgid(left.pids[0]), ::getpgid(cli->pid())) << "holdfast is not in the command's group";

    raw->integer({"DEL", "job"});
    const auto result = cli->wait();
    EXPECT_EQ(result.status, 128 + SIGTERM) << result.err;
    EXPECT_NE(result.err.find("lost the lock 'job' ("), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("; sending SIGTERM to the command's process group"), std::string::npos) << result.err;
    EXPECT_TRUE(eventually([&] { return !running(grandchild); }, 20s)) << "the grandchild outlived the lock";
}

TEST_F(CliProcessGroup, SigtermToHoldfastStopsTheGrandchildAndReleases) {
    auto cli = start(with_grandchild({"run", "job"}, dir.string()));
    Reaper left{{written_pid("leader", *cli), written_pid("grandchild", *cli)}};
    ::kill(cli->pid(), SIGTERM);
    const auto result = cli->wait();
    EXPECT_EQ(result.status, 128 + SIGTERM) << result.err;
    EXPECT_TRUE(eventually([&] { return !running(left.pids[1]); }, 20s)) << "the grandchild outlived holdfast";
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);
}

// The supervisor, not holdfast, stops the group: it is the one left.
TEST_F(CliProcessGroup, KillMinus9OfHoldfastStopsTheGrandchild) {
    auto cli = start(with_grandchild({"run", "job"}, dir.string()));
    Reaper left{{written_pid("leader", *cli), written_pid("grandchild", *cli)}};
    ::kill(cli->pid(), SIGKILL);
    EXPECT_EQ(cli->wait().status, 128 + SIGKILL);
    EXPECT_TRUE(eventually([&] { return !running(left.pids[1]); }, 20s)) << "the grandchild outlived holdfast";
    EXPECT_TRUE(eventually([&] { return !running(left.pids[0]); }, 20s)) << "the command outlived holdfast";
}

// ...also when holdfast's whole process group is killed (`kill -9 %1` in a
// shell), which takes the supervisor along unless it has a group of its own.
TEST_F(CliProcessGroup, KillMinus9OfHoldfastsGroupStopsTheGrandchild) {
    Cli cli(with_grandchild({"--url", server->url(), "run", "job"}, dir.string()), dir, {}, true);
    Reaper left{{written_pid("leader", cli), written_pid("grandchild", cli)}};
    ASSERT_EQ(::getpgid(cli.pid()), cli.pid());
    ::kill(-cli.pid(), SIGKILL);
    EXPECT_EQ(cli.wait().status, 128 + SIGKILL);
    EXPECT_TRUE(eventually([&] { return !running(left.pids[1]); }, 20s)) << "the grandchild outlived holdfast";
}

// A group that ignores SIGTERM gets SIGKILL --kill-after later.
TEST_F(CliProcessGroup, KillAfterEndsAGroupThatIgnoresTheSignal) {
    auto cli = start(with_grandchild({"--watchdog-timeout", "1500ms", "run", "--kill-after", "500ms", "job"},
                                     dir.string(), "trap '' TERM; "));
    Reaper left{{written_pid("leader", *cli), written_pid("grandchild", *cli)}};
    raw->integer({"DEL", "job"});
    const auto result = cli->wait();
    EXPECT_EQ(result.status, 128 + SIGKILL) << result.err;
    EXPECT_NE(result.err.find("the command still runs 500ms after SIGTERM; sending SIGKILL to its process group"),
              std::string::npos)
        << result.err;
    EXPECT_TRUE(eventually([&] { return !running(left.pids[1]); }, 20s));
}

TEST_F(CliProcessGroup, KillAfterAppliesWhenHoldfastIsKilled) {
    auto cli = start(with_grandchild({"run", "--kill-after", "300ms", "job"}, dir.string(), "trap '' TERM; "));
    Reaper left{{written_pid("leader", *cli), written_pid("grandchild", *cli)}};
    ::kill(cli->pid(), SIGKILL);
    cli->wait();
    EXPECT_TRUE(eventually([&] { return !running(left.pids[0]) && !running(left.pids[1]); }, 20s))
        << "a group ignoring SIGTERM outlived holdfast despite --kill-after";
}

// Without --kill-after nothing escalates: a group ignoring the signal runs on.
TEST_F(CliProcessGroup, WithoutKillAfterAGroupIgnoringTheSignalRunsOn) {
    auto cli = start(with_grandchild({"--watchdog-timeout", "1500ms", "run", "job"}, dir.string(), "trap '' TERM; "));
    Reaper left{{written_pid("leader", *cli), written_pid("grandchild", *cli)}};
    raw->integer({"DEL", "job"});
    ASSERT_TRUE(eventually([&] { return cli->err().find("sending SIGTERM") != std::string::npos; }, 20s)) << cli->err();
    ASSERT_TRUE(running(left.pids[0]));
    ::kill(left.pids[1], SIGKILL);  // the command's wait returns: it exits 0, not killed
    const auto result = cli->wait();
    EXPECT_EQ(result.status, 0) << result.err;
}

// (HUP: a non-interactive shell starts background commands with SIGINT ignored.)
TEST_F(CliProcessGroup, SignalChoosesWhatALostLockSends) {
    const std::string on_hup = "trap 'echo HUP > " + path("got") + "; exit 0' HUP; ";
    auto cli = start(with_grandchild({"--watchdog-timeout", "1500ms", "run", "--signal", "HUP", "job"}, dir.string(),
                                     on_hup));
    Reaper left{{written_pid("leader", *cli), written_pid("grandchild", *cli)}};
    raw->integer({"DEL", "job"});
    const auto result = cli->wait();
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(read_file(path("got")), "HUP\n");
    EXPECT_NE(result.err.find("; sending SIGHUP to the command's process group"), std::string::npos) << result.err;
    EXPECT_TRUE(eventually([&] { return !running(left.pids[1]); }, 20s));
}

TEST_F(CliProcessGroup, SignalIsWhatHoldfastsDeathSends) {
    const std::string on_usr1 = "trap 'echo USR1 > " + path("got") + "; exit 0' USR1; ";
    auto cli = start(with_grandchild({"run", "--signal", "usr1", "job"}, dir.string(), on_usr1));
    Reaper left{{written_pid("leader", *cli), written_pid("grandchild", *cli)}};
    ::kill(cli->pid(), SIGKILL);
    cli->wait();
    EXPECT_TRUE(eventually([&] { return read_file(path("got")) == "USR1\n"; }, 20s));
}

}  // namespace
}  // namespace holdfast::testing
