#include "cli/process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <system_error>

#include "cli/cli.hpp"

extern char** environ;

namespace holdfast::cli {
namespace {

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

sigset_t handled_signals() {
    sigset_t set;
    sigemptyset(&set);
    for (int signo : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&set, signo);
    return set;
}

}  // namespace

// An eventfd shared with the threads that may notify, so a late notification
// never writes to a descriptor number that was closed and reused.
class Events::Wakeup {
public:
    Wakeup() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
        if (fd_ < 0) throw_errno("eventfd");
    }
    ~Wakeup() { ::close(fd_); }
    int fd() const { return fd_; }
    void notify() const {
        const std::uint64_t one = 1;
        [[maybe_unused]] auto n = ::write(fd_, &one, sizeof one);  // only fails when the counter is saturated
    }
    void drain() const {
        std::uint64_t count;
        [[maybe_unused]] auto n = ::read(fd_, &count, sizeof count);
    }

private:
    int fd_;
};

Events::Events() : wakeup_(std::make_shared<Wakeup>()) {
    // An inherited SIG_IGN for SIGCHLD would make the kernel reap the child for us.
    ::signal(SIGCHLD, SIG_DFL);
    const sigset_t set = handled_signals();
    if (int e = ::pthread_sigmask(SIG_BLOCK, &set, &original_mask_); e != 0)
        throw std::system_error(e, std::generic_category(), "pthread_sigmask");
    signal_fd_ = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (signal_fd_ < 0) throw_errno("signalfd");
}

Events::~Events() {
    ::close(signal_fd_);
    ::pthread_sigmask(SIG_SETMASK, &original_mask_, nullptr);
}

Events::Event Events::wait(std::optional<std::chrono::steady_clock::time_point> deadline) {
    for (;;) {
        int timeout_ms = -1;
        if (deadline) {
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) return {Event::Kind::timeout};
            timeout_ms = static_cast<int>(std::min<std::chrono::milliseconds::rep>(left.count(), 1'000'000'000));
        }
        pollfd fds[] = {{signal_fd_, POLLIN, 0}, {wakeup_->fd(), POLLIN, 0}};
        if (::poll(fds, 2, timeout_ms) < 0) {
            if (errno == EINTR) continue;
            throw_errno("poll");
        }
        if (fds[0].revents & POLLIN) {
            signalfd_siginfo info;
            if (::read(signal_fd_, &info, sizeof info) == sizeof info)
                return {Event::Kind::signal, static_cast<int>(info.ssi_signo), info.ssi_code == SI_KERNEL};
        }
        if (fds[1].revents & POLLIN) {
            wakeup_->drain();
            return {Event::Kind::wakeup};
        }
    }
}

std::function<void()> Events::notifier() const {
    return [wakeup = wakeup_] { wakeup->notify(); };
}

namespace {

// Where execvp would look for `command`, worked out before fork: the child
// may only make async-signal-safe calls, and PATH lookup is not one.
std::vector<std::string> candidates(const std::string& command) {
    if (command.find('/') != std::string::npos) return {command};
    const char* path = std::getenv("PATH");
    std::string_view dirs = path ? path : "/bin:/usr/bin";  // glibc's default
    std::vector<std::string> found;
    for (;;) {
        const auto colon = dirs.find(':');
        const std::string_view dir = dirs.substr(0, colon);
        found.push_back((dir.empty() ? std::string(".") : std::string(dir)) + '/' + command);
        if (colon == std::string_view::npos) return found;
        dirs.remove_prefix(colon + 1);
    }
}

// In the child, between fork and exec: async-signal-safe calls only. Sends
// exec's errno down `report` (close-on-exec, so a successful exec closes it).
[[noreturn]] void exec_child(const std::vector<char*>& paths, char* const* args, const sigset_t& mask,
                             pid_t parent, int report) {
    // The command is signalled when holdfast dies, even by SIGKILL. A parent
    // that died before prctl took effect shows as a new parent pid.
    int error = 0;
    if (::prctl(PR_SET_PDEATHSIG, parent_death_signal) != 0) error = errno;
    if (::getppid() != parent) ::_exit(exit_code::signal_base + parent_death_signal);
    ::sigprocmask(SIG_SETMASK, &mask, nullptr);
    bool denied = false;
    for (std::size_t i = 0; error == 0 && i < paths.size(); ++i) {
        ::execve(paths[i], args, environ);
        if (errno == EACCES) denied = true;  // as execvp: go on searching, report it if nothing runs
        else if (errno != ENOENT && errno != ENOTDIR) error = errno;
    }
    if (error == 0) error = denied ? EACCES : ENOENT;
    [[maybe_unused]] auto n = ::write(report, &error, sizeof error);
    ::_exit(exit_code::cannot_execute);
}

}  // namespace

Child Child::spawn(const std::vector<std::string>& argv, const sigset_t& mask) {
    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    const std::vector<std::string> found = candidates(argv[0]);
    std::vector<char*> paths;
    for (const auto& path : found) paths.push_back(const_cast<char*>(path.c_str()));

    // fork rather than posix_spawn, to set the parent-death signal in the
    // child. It fires when the *thread* that forked exits: this is holdfast's
    // main thread, which lives as long as holdfast does.
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0) throw_errno("pipe2");
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) exec_child(paths, args.data(), mask, parent, report[1]);
    const int fork_error = errno;
    ::close(report[1]);
    int error = 0;
    ssize_t n;
    while ((n = ::read(report[0], &error, sizeof error)) < 0 && errno == EINTR) {
    }
    ::close(report[0]);
    if (pid < 0) throw std::system_error(fork_error, std::generic_category(), "fork");
    if (n != sizeof error) return Child(pid);  // exec closed the pipe: the command runs

    Child failed(pid);
    failed.reap();
    if (error == ENOENT) throw SpawnError(argv[0] + ": command not found", exit_code::not_found);
    throw SpawnError(argv[0] + ": " + std::strerror(error), exit_code::cannot_execute);
}

void Child::signal(int signo) const { ::kill(pid_, signo); }

bool Child::exited() const {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) < 0) return errno == ECHILD;
    return info.si_pid != 0;
}

int Child::reap() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0) {
        if (errno != EINTR) throw_errno("waitpid");
    }
    if (WIFSIGNALED(status)) return exit_code::signal_base + WTERMSIG(status);
    return WEXITSTATUS(status);
}

std::vector<int> open_descriptors() {
    std::vector<int> fds;
    DIR* dir = ::opendir("/proc/self/fd");
    if (!dir) return fds;  // no /proc: nothing is marked, the command inherits a little more
    while (const dirent* entry = ::readdir(dir)) {
        const int fd = std::atoi(entry->d_name);
        if (entry->d_name[0] != '.' && fd != ::dirfd(dir)) fds.push_back(fd);
    }
    ::closedir(dir);
    std::sort(fds.begin(), fds.end());
    return fds;
}

void close_on_exec_except(const std::vector<int>& inherited) {
    for (int fd : open_descriptors()) {
        if (std::binary_search(inherited.begin(), inherited.end(), fd)) continue;
        if (const int flags = ::fcntl(fd, F_GETFD); flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
}

}  // namespace holdfast::cli
