// The command `run` starts: in a process group of its own, so that a signal
// reaches everything it started, and watched by a supervisor process that
// outlives holdfast, so that the group is stopped even when holdfast is
// killed with SIGKILL (docs/cli.md, "Process groups").
//
//   holdfast ── supervisor (its own process group) ── command (group leader) ── its children...
//
// The supervisor is a fork of holdfast that never execs: between fork and
// exit it makes async-signal-safe calls only. It sees holdfast die as the end
// of a pipe only holdfast holds open, and then signals the command's group
// itself. It holds
// the command unreaped until holdfast says it is done with the group, so the
// group id is never a recycled one when holdfast signals it.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace holdfast::cli {

/// exec failed: the command is missing (127) or not executable (126).
class SpawnError : public std::runtime_error {
public:
    SpawnError(const std::string& what, int exit_code) : std::runtime_error(what), exit_code(exit_code) {}
    int exit_code;
};

/// How a command that must stop is stopped, as timeout(1) does it.
struct StopPolicy {
    /// Sent to the group when the lock is lost and when holdfast dies (--signal).
    int signal = SIGTERM;
    /// Then SIGKILL to the group this long after, if the command still runs; and
    /// to what is left of the group as soon as the command exits (--kill-after).
    std::optional<std::chrono::milliseconds> kill_after;
};

/// A running command and its process group. Move-only; the destructor kills
/// a group not finish()ed and waits for the supervisor.
///
/// Thread safety: none; use it from one thread.
class CommandGroup {
public:
    /// What the supervisor said.
    struct Report {
        enum class Kind {
            exited,           ///< the command exited: `status` as a shell reports it
            stopped,          ///< the command was stopped (^Z, SIGTTIN, ...)
            supervisor_died,  ///< the supervisor is gone without a word (killed on its own)
        } kind;
        int status = 0;
    };

    /// Starts argv[0] (searched in PATH, as execvp does) under `mask`. Its
    /// group gets the terminal's foreground when holdfast may hand it over
    /// (terminal_for_command()). Throws SpawnError.
    static CommandGroup spawn(const std::vector<std::string>& argv, const sigset_t& mask, const StopPolicy& stop);

    CommandGroup(CommandGroup&& other) noexcept;
    CommandGroup& operator=(CommandGroup&&) = delete;
    ~CommandGroup();

    /// The command's pid, which is also its process group's id.
    pid_t pid() const { return command_; }
    /// Readable when the supervisor has something to say: read_report().
    int report_fd() const { return report_; }
    Report read_report();

    /// Sends `signo` to every process of the group, then SIGCONT (a stopped
    /// process acts on a signal only once continued) unless `signo` is SIGKILL.
    void signal(int signo) const;
    /// Whether the command's group got the terminal's foreground.
    bool has_terminal() const { return terminal_ >= 0; }
    /// After a `stopped` report from a command with the terminal: stops
    /// holdfast's process group, so the shell's job control sees the job stopped; once
    /// continued (fg, bg), gives the terminal back if it has it, and continues the group.
    void follow_stop() const;
    /// After the `exited` report: lets the supervisor reap the command, reaps
    /// the supervisor, and gives the terminal back to holdfast's group.
    void finish();

private:
    CommandGroup(pid_t supervisor, pid_t command, int report, int release, int terminal)
        : supervisor_(supervisor), command_(command), report_(report), release_(release), terminal_(terminal) {}

    pid_t supervisor_;
    pid_t command_;
    int report_;   // read end: the supervisor's reports
    int release_;  // write end: closing it lets the supervisor reap the command and exit
    int terminal_;  // the terminal handed to the command's group, or -1
};

}  // namespace holdfast::cli
