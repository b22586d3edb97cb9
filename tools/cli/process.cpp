#include "cli/process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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

Child Child::spawn(const std::vector<std::string>& argv, const sigset_t& mask) {
    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);

    // posix_spawnp rather than fork: it is safe with the Client's threads
    // running, and glibc reports a failed exec as its return value.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setsigmask(&attr, &mask);
    pid_t pid = -1;
    const int error = ::posix_spawnp(&pid, args[0], nullptr, &attr, args.data(), environ);
    posix_spawnattr_destroy(&attr);

    if (error == ENOENT) throw SpawnError(argv[0] + ": command not found", exit_code::not_found);
    if (error != 0) throw SpawnError(argv[0] + ": " + std::strerror(error), exit_code::cannot_execute);
    return Child(pid);
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
