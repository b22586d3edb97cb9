// holdfast run at a terminal: its command runs in a process group of its own,
// which holdfast makes the terminal's foreground, so the command reads the
// terminal, ^C reaches it, and ^Z stops holdfast with it (job control sees the
// job stopped). holdfast runs as a session leader on a pseudo-terminal here.
#include <pty.h>

#include "cli/cli_process.hpp"

namespace holdfast::testing {
namespace {

class CliTerminal : public CliTest {
protected:
    void TearDown() override {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        if (master_ >= 0) ::close(master_);
        CliTest::TearDown();
    }

    // holdfast --url <server> args..., on a new terminal whose foreground it is.
    void start_on_terminal(std::vector<std::string> args) {
        args.insert(args.begin(), {HOLDFAST_CLI, "--url", server->url()});
        spawn_on_terminal(std::move(args));
    }

    // A shell script on a new terminal, without job control (as a script
    // run from an interactive shell): its commands share its process group.
    // "$0" in it runs holdfast --url <server>.
    void start_script_on_terminal(const std::string& script) {
        spawn_on_terminal({"/bin/sh", "-c", script, HOLDFAST_CLI, "--url", server->url()});
    }

    void spawn_on_terminal(std::vector<std::string> args) {
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_ = ::forkpty(&master_, nullptr, nullptr, nullptr);
        ASSERT_GE(pid_, 0) << std::strerror(errno);
        if (pid_ == 0) {
            // As a terminal's shell starts its jobs: whatever this test runs under
            // (a background job ignores SIGINT and SIGQUIT), default signals.
            for (int signo : {SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU}) ::signal(signo, SIG_DFL);
            sigset_t none;
            sigemptyset(&none);
            ::sigprocmask(SIG_SETMASK, &none, nullptr);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
    }

    void type(const std::string& keys) { ASSERT_EQ(::write(master_, keys.data(), keys.size()), ssize_t(keys.size())); }

    // Its exit status as a shell reports it, or -1 if it still runs after `within`.
    int wait_exit(std::chrono::milliseconds within = 30s) {
        int status = 0;
        if (!eventually([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, within)) return -1;
        pid_ = -1;
        return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    }

    pid_t pid_ = -1;
    int master_ = -1;
};

TEST_F(CliTerminal, TheCommandReadsTheTerminal) {
    start_on_terminal({"run", "job", "--", "sh", "-c", "read line; echo \"$line\" > " + path("got")});
    type("hello\n");
    EXPECT_EQ(wait_exit(), 0) << "a command outside the foreground is stopped when it reads the terminal";
    EXPECT_EQ(read_file(path("got")), "hello\n");
}

TEST_F(CliTerminal, CtrlCStopsTheCommandAndHoldfastReleases) {
    // exec: dash run with -c catches SIGINT itself, and one that lands before it forks is lost.
    start_on_terminal({"run", "job", "--", "sh", "-c", "echo $$ > " + path("pid") + "; exec sleep 100"});
    ASSERT_TRUE(eventually([&] { return read_file(path("pid")).ends_with('\n'); }, 20s));
    const pid_t command = std::stoi(read_file(path("pid")));
    const pid_t foreground = ::tcgetpgrp(master_);
    type("\x03");
    EXPECT_EQ(wait_exit(), 128 + SIGINT) << "holdfast " << pid_ << " in state " << state_of(pid_) << "; command "
                                         << command << " in state " << state_of(command) << "; foreground group "
                                         << foreground << " when ^C was typed";
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0) << "holdfast died of the ^C instead of releasing";
}

TEST_F(CliTerminal, CtrlZStopsHoldfastWithTheCommand) {
    start_on_terminal({"run", "job", "--", "sh", "-c",
                       "echo $$ > " + path("pid") + "; read line; echo \"$line\" > " + path("got")});
    ASSERT_TRUE(eventually([&] { return read_file(path("pid")).ends_with('\n'); }, 20s));
    const pid_t command = std::stoi(read_file(path("pid")));
    type("\x1a");
    EXPECT_TRUE(eventually([&] { return state_of(command) == 'T'; }, 20s));
    EXPECT_TRUE(eventually([&] { return state_of(pid_) == 'T'; }, 20s)) << "job control would not see the job stopped";
    ::kill(pid_, SIGCONT);  // as a shell's bg or fg does
    EXPECT_TRUE(eventually([&] { return state_of(command) != 'T'; }, 20s)) << "the command was not continued";
    type("again\n");
    EXPECT_EQ(wait_exit(), 0);
    EXPECT_EQ(read_file(path("got")), "again\n");
}

// The script waits for holdfast: the command may have the terminal.
TEST_F(CliTerminal, ACommandRunFromAScriptReadsTheTerminal) {
    start_script_on_terminal("\"$0\" \"$1\" \"$2\" run job -- sh -c 'read line; echo \"$line\" > " + path("got") +
                             "'; true");
    type("hello\n");
    EXPECT_EQ(wait_exit(), 0) << "the command was left outside the foreground";
    EXPECT_EQ(read_file(path("got")), "hello\n");
}

// A pipeline's other stage shares holdfast's group and reads the terminal,
// as `holdfast run ... | less` does: it keeps the terminal.
TEST_F(CliTerminal, APipelineStageBesideHoldfastKeepsTheTerminal) {
    start_script_on_terminal("\"$0\" \"$1\" \"$2\" run job -- echo done | { read out; read key < /dev/tty; echo \"$out "
                             "$key\" > " + path("got") + "; }");
    type("k\n");
    EXPECT_EQ(wait_exit(), 0) << "the stage reading the terminal was stopped: the command took the foreground";
    EXPECT_EQ(read_file(path("got")), "done k\n");
}

}  // namespace
}  // namespace holdfast::testing
