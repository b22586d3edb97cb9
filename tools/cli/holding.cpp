// holdfast run while holding: the command runs in its own process group,
// which is signalled when the hold is lost or holdfast is; or, without a
// command, holdfast holds until a signal.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli/command_group.hpp"
#include "cli/duration.hpp"
#include "cli/hold.hpp"
#include "cli/state_json.hpp"
#include "common/quoted.hpp"

namespace holdfast::cli {
namespace {

using Clock = std::chrono::steady_clock;
using Kind = Events::Event::Kind;

std::optional<Clock::time_point> earliest(std::optional<Clock::time_point> a, std::optional<Clock::time_point> b) {
    if (!a) return b;
    if (!b) return a;
    return std::min(*a, *b);
}

std::optional<Clock::time_point> lease_deadline(const Hold& hold) {
    return hold.deadline ? hold.deadline() : std::nullopt;
}

bool lost(const Hold& hold) {
    if (hold.lost.stop_requested()) return true;
    const auto deadline = lease_deadline(hold);
    return deadline && Clock::now() >= *deadline;
}

// The command's environment names what it runs under. No other thread reads it.
void export_environment(const std::string& name, const Hold& hold) {
    ::setenv("HOLDFAST_NAME", name.c_str(), 1);
    ::setenv("HOLDFAST_OWNER", hold.owner.c_str(), 1);
    // Not one inherited from an outer holdfast run: it would be another lock's.
    if (hold.token) ::setenv("HOLDFAST_TOKEN", std::to_string(*hold.token).c_str(), 1);
    else ::unsetenv("HOLDFAST_TOKEN");
}

// Stopping the command as timeout(1) does: a signal to its group, then
// SIGKILL if it still runs after --kill-after.
class Stopper {
public:
    Stopper(const CommandGroup& group, const RunOptions& options) : group_(group), options_(options) {}

    void stop(int signo) {
        group_.signal(signo);
        if (!first_ && options_.kill_after) kill_at_ = Clock::now() + *options_.kill_after;
        if (!first_) first_ = signo;
    }
    std::optional<Clock::time_point> deadline() const { return kill_at_; }
    void on_time() {
        if (!kill_at_ || Clock::now() < *kill_at_) return;
        warn("the command still runs " + format_duration(*options_.kill_after) + " after " + signal_name(*first_) +
             "; sending SIGKILL to its process group");
        group_.signal(SIGKILL);
        kill_at_.reset();
    }
    // The command was told to stop and has: with --kill-after, what is left
    // of its group goes too, before the lock is released.
    void after_exit() const {
        if (first_ && options_.kill_after) group_.signal(SIGKILL);
    }

private:
    const CommandGroup& group_;
    const RunOptions& options_;
    std::optional<int> first_;
    std::optional<Clock::time_point> kill_at_;
};

// Until the command exits: signals sent to holdfast go on to the command's
// group, a lost hold sends it --signal. A terminal's ^C already reached the
// group if it has the terminal, so it is not sent twice.
int wait_for_exit(CommandGroup& group, const Hold& hold, const RunOptions& options, Events& events) {
    Stopper stopper(group, options);
    bool told_lost = false;
    for (;;) {
        const auto event = events.wait(earliest(stopper.deadline(), told_lost ? std::nullopt : lease_deadline(hold)),
                                       group.report_fd());
        if (event.kind == Kind::readable) {
            const auto report = group.read_report();
            if (report.kind == CommandGroup::Report::Kind::stopped) {
                if (group.has_terminal()) group.follow_stop();
                continue;
            }
            if (report.kind == CommandGroup::Report::Kind::supervisor_died) {
                warn("the process watching the command (its supervisor) died; sending SIGKILL to the command's "
                     "process group");
                group.signal(SIGKILL);
                return exit_code::signal_base + SIGKILL;
            }
            stopper.after_exit();
            return report.status;
        }
        if (event.kind == Kind::signal && event.signo != SIGCHLD && !(event.from_terminal && group.has_terminal()))
            stopper.stop(event.signo);
        if (!told_lost && lost(hold)) {
            told_lost = true;
            warn(hold.why_lost + "; sending " + signal_name(options.stop_signal) + " to the command's process group");
            stopper.stop(options.stop_signal);
        }
        stopper.on_time();
    }
}

int run_command(const Hold& hold, const RunOptions& options, Events& events) {
    std::optional<CommandGroup> group;
    try {
        group.emplace(CommandGroup::spawn(options.command, events.original_mask(),
                                          StopPolicy{options.stop_signal, options.kill_after}));
    } catch (const SpawnError& e) {
        hold.release();
        return fail(e.exit_code, e.what());
    }
    int status;
    {
        std::stop_callback wake(hold.lost, events.notifier());
        status = wait_for_exit(*group, hold, options, events);
    }
    group->finish();
    hold.release();
    return status;
}

// What is held, on one line a script can read: NAME, owner and token tab-separated, or JSON.
void print_held(const Hold& hold, const RunOptions& options) {
    if (options.json) {
        std::cout << dump({{"name", options.name},
                           {"owner", hold.owner},
                           {"token", hold.token ? nlohmann::json(*hold.token) : nlohmann::json()}})
                  << std::endl;
        return;
    }
    std::string line = detail::printable(options.name) + '\t' + detail::printable(hold.owner);
    if (hold.token) line += '\t' + std::to_string(*hold.token);
    std::cout << line << std::endl;
}

// etcdctl lock NAME: say what is held and hold it until told to stop.
int hold_until_signalled(const Hold& hold, const RunOptions& options, Events& events) {
    print_held(hold, options);
    std::stop_callback wake(hold.lost, events.notifier());
    for (;;) {
        const auto event = events.wait(lease_deadline(hold));
        if (event.kind == Kind::signal && event.signo != SIGCHLD) {
            hold.release();
            return exit_code::ok;
        }
        if (lost(hold)) {
            hold.release();
            return fail(exit_code::failure, hold.why_lost + "; no longer holding it");
        }
    }
}

}  // namespace

int hold_and_run(const Hold& hold, const RunOptions& options, Events& events, const std::vector<int>& inherited) {
    if (options.command.empty()) return hold_until_signalled(hold, options, events);
    export_environment(options.name, hold);
    close_on_exec_except(inherited);
    return run_command(hold, options, events);
}

std::optional<int> unless_acquired(const Acquisition& acquisition, const RunOptions& options, const std::string& what) {
    const std::string not_done = options.command.empty() ? "nothing held" : "the command was not run";
    switch (acquisition.outcome) {
        case Outcome::timed_out:
            return fail(options.conflict_exit_code, "timed out after " + format_duration(*options.wait) +
                                                        " waiting for the " + what + " " +
                                                        detail::quoted(options.name) + "; " + not_done);
        case Outcome::interrupted:
            return fail(exit_code::signal_base + acquisition.signo,
                        signal_name(acquisition.signo) + " while waiting for the " + what + " " +
                            detail::quoted(options.name) + "; " + not_done);
        case Outcome::acquired:
            break;
    }
    return std::nullopt;
}

}  // namespace holdfast::cli
