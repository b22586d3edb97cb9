#include "cli/command_group.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <system_error>

#include "cli/cli.hpp"
#include "cli/process.hpp"
#include "cli/terminal.hpp"

extern char** environ;

namespace holdfast::cli {
namespace {

// What the supervisor and the command tell holdfast through a pipe: one
// write each, atomic (smaller than PIPE_BUF).
struct Message {
    enum Kind : int { started, signalfd_failed, fork_failed, exec_failed, exited, stopped } kind;
    int value;  // started: the command's pid; *_failed: errno; exited: its status as a shell reports it
};

// Everything the supervisor and the command need, prepared before fork: after
// it, in a copy of a multi-threaded process, only async-signal-safe calls.
struct Plan {
    std::vector<char*> paths;  // where execvp would look for the command
    char* const* args;
    sigset_t mask;
    pid_t holdfast, holdfast_group;
    int terminal;            // the terminal to hand to the command's group, or -1
    int stop_signal;
    long long kill_after_ms;  // -1: none
    std::vector<int> descriptors;  // open at fork: the supervisor closes the close-on-exec ones
    int spawned, report, release;  // the supervisor's pipe ends
};

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

void send(int fd, Message message) { [[maybe_unused]] auto n = ::write(fd, &message, sizeof message); }

bool receive(int fd, Message& message) {
    ssize_t n;
    while ((n = ::read(fd, &message, sizeof message)) < 0 && errno == EINTR) {
    }
    return n == sizeof message;
}

long long monotonic_ms() {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<long long>(now.tv_sec) * 1000 + now.tv_nsec / 1'000'000;
}

// The group gets `signo`, then SIGCONT: a stopped process acts on it only once continued.
void signal_group(pid_t group, int signo) {
    ::kill(-group, signo);
    if (signo != SIGKILL && signo != SIGCONT) ::kill(-group, SIGCONT);
}

// The command, between fork and exec: its own process group (the terminal's
// foreground if holdfast had it), a death signal if its supervisor dies, the
// mask holdfast started with. Sends exec's errno on failure.
[[noreturn]] void exec_command(const Plan& plan, pid_t supervisor) {
    ::setpgid(0, 0);
    // SIGTTOU is blocked (Events), so a background group may take the foreground.
    if (plan.terminal >= 0 && ::tcgetpgrp(plan.terminal) == plan.holdfast_group) ::tcsetpgrp(plan.terminal, ::getpid());
    int error = 0;
    if (::prctl(PR_SET_PDEATHSIG, plan.stop_signal) != 0) error = errno;
    if (::getppid() != supervisor) ::_exit(exit_code::signal_base + plan.stop_signal);
    ::sigprocmask(SIG_SETMASK, &plan.mask, nullptr);
    bool denied = false;
    for (std::size_t i = 0; error == 0 && i < plan.paths.size(); ++i) {
        ::execve(plan.paths[i], plan.args, environ);
        if (errno == EACCES) denied = true;  // as execvp: go on searching, report it if nothing runs
        else if (errno != ENOENT && errno != ENOTDIR) error = errno;
    }
    if (error == 0) error = denied ? EACCES : ENOENT;
    send(plan.spawned, {Message::exec_failed, error});
    ::_exit(exit_code::cannot_execute);
}

int shell_status(const siginfo_t& info) {
    return info.si_code == CLD_EXITED ? info.si_status : exit_code::signal_base + info.si_status;
}

// holdfast is gone, killed or done with the group: no copy of the release
// pipe's write end is left (holdfast never writes to it). Not getppid(): a
// process killed with -9 ends thread by thread, and its child passes to a
// sibling thread first, which getppid() still names as holdfast, while the
// parent-death signal comes once, when the thread that forked it ends.
bool holdfast_gone(int release) {
    pollfd end{release, POLLIN, 0};
    return ::poll(&end, 1, 0) == 1;
}

// The supervisor's life after starting the command: report its stops and its
// exit; when holdfast dies, stop the group itself. `child_events`: a
// signalfd for SIGCHLD.
[[noreturn]] void watch(const Plan& plan, pid_t command, int child_events) {
    bool orphaned = false;
    long long kill_at = -1;
    for (;;) {
        if (!orphaned && holdfast_gone(plan.release)) {
            orphaned = true;
            signal_group(command, plan.stop_signal);
            if (plan.kill_after_ms >= 0) kill_at = monotonic_ms() + plan.kill_after_ms;
        }
        siginfo_t info{};
        const id_t id = static_cast<id_t>(command);
        if (::waitid(P_PID, id, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == command) {
            if (orphaned) {
                if (plan.kill_after_ms >= 0) ::kill(-command, SIGKILL);  // what is left of the group
            } else {
                send(plan.report, {Message::exited, shell_status(info)});
                // Unreaped until holdfast is done signalling the group (EOF: it closed
                // its end, or died), so the group id cannot have been recycled.
                char byte;
                while (::read(plan.release, &byte, 1) != 0 && errno == EINTR) {
                }
            }
            ::waitpid(command, nullptr, 0);
            ::_exit(0);
        }
        info = {};
        if (::waitid(P_PID, id, &info, WSTOPPED | WNOHANG) == 0 && info.si_pid == command && !orphaned)
            send(plan.report, {Message::stopped, 0});
        int timeout_ms = -1;
        if (kill_at >= 0) {
            const long long left = kill_at - monotonic_ms();
            if (left <= 0) {
                ::kill(-command, SIGKILL);
                kill_at = -1;
                continue;
            }
            timeout_ms = static_cast<int>(left);
        }
        // Wakes on the command's exit or stop, or holdfast's end (a negative fd is skipped).
        pollfd fds[] = {{child_events, POLLIN, 0}, {orphaned ? -1 : plan.release, POLLIN, 0}};
        if (::poll(fds, 2, timeout_ms) > 0 && (fds[0].revents & POLLIN)) {
            signalfd_siginfo drained;
            [[maybe_unused]] auto n = ::read(child_events, &drained, sizeof drained);
        }
    }
}

[[noreturn]] void supervise(const Plan& plan) {
    for (int fd : plan.descriptors) {
        if (fd == plan.spawned || fd == plan.report || fd == plan.release) continue;
        if (const int flags = ::fcntl(fd, F_GETFD); flags >= 0 && (flags & FD_CLOEXEC)) ::close(fd);
    }
    // Its own group: a signal to holdfast's job (kill -9 %1) leaves it to stop the command's.
    ::setpgid(0, 0);
    if (holdfast_gone(plan.release)) ::_exit(0);  // holdfast died already: start nothing
    // SIGCHLD: read from the signalfd. SIGPIPE: a report to a holdfast killed
    // meanwhile fails with EPIPE instead of killing the supervisor, which
    // would leave the command's children running. The command gets plan.mask.
    sigset_t blocked, child;
    sigemptyset(&child);
    sigaddset(&child, SIGCHLD);
    blocked = child;
    sigaddset(&blocked, SIGPIPE);
    ::sigprocmask(SIG_BLOCK, &blocked, nullptr);
    const int child_events = ::signalfd(-1, &child, SFD_CLOEXEC | SFD_NONBLOCK);
    if (child_events < 0) {
        send(plan.spawned, {Message::signalfd_failed, errno});
        ::_exit(0);
    }
    const pid_t supervisor = ::getpid();
    const pid_t command = ::fork();
    if (command == 0) exec_command(plan, supervisor);
    if (command < 0) {
        send(plan.spawned, {Message::fork_failed, errno});
        ::_exit(0);
    }
    ::setpgid(command, command);  // also here: holdfast may signal the group before the command runs
    send(plan.spawned, {Message::started, command});
    ::close(plan.spawned);
    watch(plan, command, child_events);
}

// Where execvp would look for `command`, worked out before fork: PATH lookup
// is not async-signal-safe.
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

struct Pipe {
    int read = -1, write = -1;
    Pipe() {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) throw_errno("pipe2");
        read = fds[0];
        write = fds[1];
    }
};

pid_t reap(pid_t pid) {
    pid_t r;
    while ((r = ::waitpid(pid, nullptr, 0)) < 0 && errno == EINTR) {
    }
    return r;
}

}  // namespace

CommandGroup CommandGroup::spawn(const std::vector<std::string>& argv, const sigset_t& mask, const StopPolicy& stop) {
    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    const std::vector<std::string> found = candidates(argv[0]);

    Pipe spawned, report, release;
    Plan plan{{}, args.data(), mask, ::getpid(), ::getpgrp(), terminal_for_command(), stop.signal,
              stop.kill_after ? static_cast<long long>(stop.kill_after->count()) : -1, open_descriptors(),
              spawned.write, report.write, release.read};
    for (const auto& path : found) plan.paths.push_back(const_cast<char*>(path.c_str()));

    const pid_t supervisor = ::fork();
    if (supervisor == 0) supervise(plan);
    const int fork_error = errno;
    for (int fd : {spawned.write, report.write, release.read}) ::close(fd);
    if (supervisor < 0) {
        for (int fd : {spawned.read, report.read, release.write}) ::close(fd);
        throw std::system_error(fork_error, std::generic_category(), "fork");
    }

    // Until both ends are closed: the supervisor's after `started`, the command's by exec.
    pid_t command = -1;
    int exec_error = 0, supervisor_error = 0;
    const char* supervisor_call = "";  // what failed in the supervisor, as errno names it
    for (Message message{}; receive(spawned.read, message);) {
        if (message.kind == Message::started) command = message.value;
        if (message.kind == Message::exec_failed) exec_error = message.value;
        if (message.kind == Message::fork_failed || message.kind == Message::signalfd_failed) {
            supervisor_error = message.value;
            supervisor_call = message.kind == Message::fork_failed ? "fork" : "signalfd";
        }
    }
    ::close(spawned.read);
    if (command < 0) {
        ::close(report.read);
        ::close(release.write);
        reap(supervisor);
        if (supervisor_error != 0) throw std::system_error(supervisor_error, std::generic_category(), supervisor_call);
        throw std::runtime_error("the command's supervisor process died before starting it");
    }
    const int terminal = plan.terminal >= 0 && ::tcgetpgrp(plan.terminal) == command ? plan.terminal : -1;
    CommandGroup group(supervisor, command, report.read, release.write, terminal);
    if (exec_error != 0) {
        group.read_report();  // its exit
        group.finish();
        if (exec_error == ENOENT) throw SpawnError(argv[0] + ": command not found", exit_code::not_found);
        throw SpawnError(argv[0] + ": " + std::strerror(exec_error), exit_code::cannot_execute);
    }
    return group;
}

CommandGroup::CommandGroup(CommandGroup&& other) noexcept
    : supervisor_(other.supervisor_), command_(other.command_), report_(other.report_), release_(other.release_),
      terminal_(other.terminal_) {
    other.supervisor_ = -1;
    other.report_ = other.release_ = other.terminal_ = -1;
}

CommandGroup::~CommandGroup() {
    if (supervisor_ < 0) return;
    ::kill(-command_, SIGKILL);
    finish();
}

CommandGroup::Report CommandGroup::read_report() {
    Message message{};
    if (!receive(report_, message)) return {Report::Kind::supervisor_died};
    if (message.kind == Message::stopped) return {Report::Kind::stopped};
    return {Report::Kind::exited, message.value};
}

void CommandGroup::signal(int signo) const { signal_group(command_, signo); }

void CommandGroup::follow_stop() const {
    // holdfast's whole group, as ^Z would have stopped it without holdfast
    // (a script running holdfast, say), so the shell sees its job stopped.
    ::kill(0, SIGSTOP);
    // Continued: by fg (the terminal is holdfast's group's again) or by bg.
    if (terminal_ >= 0 && ::tcgetpgrp(terminal_) == ::getpgrp()) ::tcsetpgrp(terminal_, command_);
    ::kill(-command_, SIGCONT);
}

void CommandGroup::finish() {
    if (supervisor_ < 0) return;
    // While the command is unreaped its group id is its own.
    if (terminal_ >= 0 && ::tcgetpgrp(terminal_) == command_) ::tcsetpgrp(terminal_, ::getpgrp());
    ::close(release_);
    reap(supervisor_);
    ::close(report_);
    supervisor_ = -1;
    report_ = release_ = terminal_ = -1;
}

}  // namespace holdfast::cli
