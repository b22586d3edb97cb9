// The process side of `run`: a child command, and one place to wait for
// signals, the child's exit and wake-ups from other threads.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace holdfast::cli {

/// Blocks SIGINT, SIGTERM, SIGHUP and SIGCHLD in the calling thread and reads
/// them from a signalfd instead. Construct it before any thread starts (the
/// Client's among them): threads inherit the mask, so these signals reach
/// only this object and never kill holdfast half-way.
///
/// Thread safety: wait() from the constructing thread only; the notifier from any.
class Events {
public:
    struct Event {
        enum class Kind { signal, wakeup, timeout } kind;
        int signo = 0;
        /// Sent by the kernel (a terminal's ^C, a hangup) rather than by kill(2):
        /// the command, in the same process group, got it too.
        bool from_terminal = false;
    };

    Events();
    ~Events();
    Events(const Events&) = delete;
    Events& operator=(const Events&) = delete;

    /// Blocks until a signal, a notification or `deadline` (nullopt: none).
    Event wait(std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);
    /// Wakes wait(); safe from any thread, even after this object is gone.
    std::function<void()> notifier() const;
    /// The mask holdfast started with, for the command to run under.
    const sigset_t& original_mask() const { return original_mask_; }

private:
    class Wakeup;
    sigset_t original_mask_;
    int signal_fd_ = -1;
    std::shared_ptr<Wakeup> wakeup_;
};

/// exec failed: the command is missing (127) or not executable (126).
class SpawnError : public std::runtime_error {
public:
    SpawnError(const std::string& what, int exit_code) : std::runtime_error(what), exit_code(exit_code) {}
    int exit_code;
};

/// What the command gets when holdfast dies without stopping it (SIGKILL, a
/// crash). SIGTERM, as for a lost lease: the lock stays held until its lease
/// runs out, which leaves the command time to stop cleanly (docs/cli.md).
inline constexpr int parent_death_signal = SIGTERM;

/// A child process running a command with holdfast's stdio. Not reaped until
/// reap(), so its pid cannot be reused while another thread may signal it.
class Child {
public:
    /// Runs argv[0] (searched in PATH, as execvp does) under `mask`; it gets
    /// parent_death_signal when the calling thread ends, so call it from the
    /// thread that lives as long as holdfast (the main thread). Throws SpawnError.
    static Child spawn(const std::vector<std::string>& argv, const sigset_t& mask);

    pid_t pid() const { return pid_; }
    /// kill(2); harmless once the child has exited but not been reaped.
    void signal(int signo) const;
    /// True once the child has exited (it stays a zombie until reap()).
    bool exited() const;
    /// Waits for the exit and returns the status as a shell does: the exit
    /// code, or 128 + the signal that killed it.
    int reap();

private:
    explicit Child(pid_t pid) : pid_(pid) {}
    pid_t pid_;
};

/// The descriptors open now, to tell inherited ones from those opened later.
std::vector<int> open_descriptors();
/// Sets close-on-exec on every descriptor not in `inherited` (sorted), so the
/// command gets holdfast's own stdio and inheritance but not its Redis sockets.
void close_on_exec_except(const std::vector<int>& inherited);

}  // namespace holdfast::cli
