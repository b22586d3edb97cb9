// Running the holdfast command line tool as a process against a throwaway
// server: the CLI tests and the bad-input catalog share it.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "redis_fixture.hpp"

extern char** environ;

namespace holdfast::testing {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

inline std::string read_file(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Whether /proc/<pid>/stat text shows a process that still runs: present, and
// neither a zombie waiting to be reaped nor dead.
inline bool running_per(const std::string& stat) {
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) return false;
    const char state = stat[close + 2];
    return state != 'Z' && state != 'X';
}

inline bool running(pid_t pid) { return running_per(read_file("/proc/" + std::to_string(pid) + "/stat")); }

/// The process state letter of `pid` (R, S, T, Z, ...), or 0 if it is gone.
inline char state_of(pid_t pid) {
    const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    return close == std::string::npos || close + 2 >= stat.size() ? 0 : stat[close + 2];
}

/// A fresh directory for one test's files: holdfast's output, what its commands write.
inline fs::path make_test_dir() {
    std::string pattern = (fs::temp_directory_path() / "holdfast-cli-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
        throw std::runtime_error("cannot make a directory like " + pattern + ": " + std::strerror(errno));
    return pattern;
}

struct Finished {
    int status = -1;  // exit code, or 128 + signal as a shell reports it
    std::string out, err;
    Clock::duration elapsed{};
};

// One holdfast process: stdin /dev/null, stdout and stderr to files, and no
// descriptor of the test's beyond those three; with `own_group`, leading a
// process group of its own, as a shell's job does.
class Cli {
public:
    Cli(const std::vector<std::string>& args, const fs::path& dir, const std::vector<std::string>& env,
        bool own_group = false) {
        static int counter = 0;
        const int n = ++counter;
        out_ = dir / ("out-" + std::to_string(n));
        err_ = dir / ("err-" + std::to_string(n));

        std::vector<std::string> argv{HOLDFAST_CLI};
        argv.insert(argv.end(), args.begin(), args.end());
        std::vector<char*> cargv, cenv;
        for (auto& a : argv) cargv.push_back(a.data());
        cargv.push_back(nullptr);
        std::vector<std::string> envs(env);
        for (char** e = environ; *e; ++e)
            if (!std::string_view(*e).starts_with("REDIS_URL=")) envs.emplace_back(*e);
        for (auto& e : envs) cenv.push_back(e.data());
        cenv.push_back(nullptr);

        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_addclosefrom_np(&actions, 3);
        posix_spawnattr_t attributes;
        posix_spawnattr_init(&attributes);
        if (own_group) {
            posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
            posix_spawnattr_setpgroup(&attributes, 0);
        }
        started_ = Clock::now();
        const int error = posix_spawn(&pid_, cargv[0], &actions, &attributes, cargv.data(), cenv.data());
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attributes);
        if (error != 0) throw std::runtime_error(std::string("cannot run holdfast: ") + std::strerror(error));
    }

    ~Cli() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }

    pid_t pid() const { return pid_; }
    std::string err() const { return read_file(err_); }
    std::string out() const { return read_file(out_); }

    /// Waits for the exit; kills it and fails the test after `within`.
    Finished wait(std::chrono::milliseconds within = 60s) {
        int status = 0;
        const bool exited = eventually([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, within);
        Finished result;
        result.elapsed = Clock::now() - started_;
        if (!exited) {
            ADD_FAILURE() << "holdfast still running after " << within.count() << " ms; stderr: " << err();
            return result;
        }
        pid_ = -1;
        result.status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
        result.out = read_file(out_);
        result.err = read_file(err_);
        return result;
    }

private:
    pid_t pid_ = -1;
    fs::path out_, err_;
    Clock::time_point started_;
};

// A lock held by a client of the test's own: what holdfast run waits for.
struct HeldLock {
    HeldLock(const Config& config, const std::string& name) : client(config), lock(client, name) { lock.lock(); }
    ~HeldLock() {
        if (lock.is_held_by_current_thread()) lock.unlock();
    }
    Client client;
    Lock lock;
};

class CliTest : public RedisTest {
protected:
    void SetUp() override {
        RedisTest::SetUp();
        dir = make_test_dir();
    }
    void TearDown() override { fs::remove_all(dir); }

    /// holdfast --url <this test's server> args...
    std::unique_ptr<Cli> start(std::vector<std::string> args, std::vector<std::string> env = {}) {
        args.insert(args.begin(), {"--url", server->url()});
        return std::make_unique<Cli>(args, dir, env);
    }
    Finished holdfast(std::vector<std::string> args) { return start(std::move(args))->wait(); }
    /// Lock `name`, held until the result goes (or its lock is unlocked).
    std::unique_ptr<HeldLock> hold(const std::string& name) { return std::make_unique<HeldLock>(config(), name); }

    std::string path(const std::string& name) const { return (dir / name).string(); }
    /// The line holdfast status ends each name's lines with: where it was
    /// read, and what runs there.
    std::string server_line() const {
        return "  server: 127.0.0.1:" + std::to_string(server->port()) + " (" + server_software() + ")\n";
    }
    /// The pid a command wrote to `name` (echo $$ > name), once the line is complete.
    pid_t written_pid(const std::string& name, Cli& cli) {
        EXPECT_TRUE(eventually([&] { return read_file(path(name)).ends_with('\n'); }, 20s)) << cli.err();
        const std::string text = read_file(path(name));
        return text.empty() ? -1 : std::stoi(text);
    }
    std::string redis_cli(const std::string& args) const {
        return "redis-cli -p " + std::to_string(server->port()) + " " + args;
    }
    /// Waiters subscribed to the lock's release channel: holdfast is waiting.
    long long waiters(const std::string& name) {
        auto reply = raw->command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{" + name + "}"});
        return reply->element[1]->integer;
    }

    fs::path dir;
};

}  // namespace holdfast::testing
