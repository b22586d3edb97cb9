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
/// only this object and never kill holdfast half-way. SIGTTOU is blocked too,
/// never read: holdfast may write to, and hand back, a terminal whose
/// foreground is the command's process group.
///
/// Thread safety: wait() from the constructing thread only; the notifier from any.
class Events {
public:
    struct Event {
        enum class Kind { signal, wakeup, timeout, readable } kind;
        int signo = 0;
        /// Sent by the kernel (a terminal's ^C, a hangup) rather than by kill(2):
        /// the command, in the same process group, got it too.
        bool from_terminal = false;
    };

    Events();
    ~Events();
    Events(const Events&) = delete;
    Events& operator=(const Events&) = delete;

    /// Blocks until a signal, a notification, `deadline` (nullopt: none) or,
    /// if `watched` is not -1, that descriptor is readable (or at its end).
    Event wait(std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt, int watched = -1);
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

/// "SIGTERM", or "signal 42".
std::string signal_name(int signo);
/// A signal as kill(1) takes it: TERM, SIGTERM, term or 15; nullopt if it is none.
std::optional<int> parse_signal(const std::string& text);

/// The descriptors open now, to tell inherited ones from those opened later.
std::vector<int> open_descriptors();
/// Sets close-on-exec on every descriptor not in `inherited` (sorted), so the
/// command gets holdfast's own stdio and inheritance but not its Redis sockets.
void close_on_exec_except(const std::vector<int>& inherited);

}  // namespace holdfast::cli
