#include "cli/process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <system_error>

namespace holdfast::cli {
namespace {

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

sigset_t handled_signals() {
    sigset_t set;
    sigemptyset(&set);
    for (int signo : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&set, signo);
    return set;
}

// Blocked but never read: a write to, or tcsetpgrp on, a terminal whose
// foreground is the command's group goes ahead instead of stopping holdfast.
sigset_t blocked_signals() {
    sigset_t set = handled_signals();
    sigaddset(&set, SIGTTOU);
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
    const sigset_t blocked = blocked_signals();
    if (int e = ::pthread_sigmask(SIG_BLOCK, &blocked, &original_mask_); e != 0)
        throw std::system_error(e, std::generic_category(), "pthread_sigmask");
    signal_fd_ = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (signal_fd_ < 0) throw_errno("signalfd");
}

Events::~Events() {
    ::close(signal_fd_);
    ::pthread_sigmask(SIG_SETMASK, &original_mask_, nullptr);
}

Events::Event Events::wait(std::optional<std::chrono::steady_clock::time_point> deadline, int watched) {
    for (;;) {
        int timeout_ms = -1;
        if (deadline) {
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) return {Event::Kind::timeout};
            timeout_ms = static_cast<int>(std::min<std::chrono::milliseconds::rep>(left.count(), 1'000'000'000));
        }
        pollfd fds[] = {{signal_fd_, POLLIN, 0}, {wakeup_->fd(), POLLIN, 0}, {watched, POLLIN, 0}};
        if (::poll(fds, watched < 0 ? 2 : 3, timeout_ms) < 0) {
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
        if (watched >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) return {Event::Kind::readable};
    }
}

std::function<void()> Events::notifier() const {
    return [wakeup = wakeup_] { wakeup->notify(); };
}

std::string signal_name(int signo) {
    const char* abbrev = ::sigabbrev_np(signo);
    return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signo);
}

std::optional<int> parse_signal(const std::string& text) {
    int number = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (!text.empty() && ec == std::errc() && end == text.data() + text.size())
        return number > 0 && number < NSIG ? std::optional(number) : std::nullopt;
    std::string name;
    for (char c : text) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (name.starts_with("SIG")) name.erase(0, 3);
    for (int signo = 1; signo < NSIG; ++signo)
        if (const char* abbrev = ::sigabbrev_np(signo); abbrev && name == abbrev) return signo;
    return std::nullopt;
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
