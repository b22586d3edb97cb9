#include "workers.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <thread>

namespace holdfast::check {
namespace {

std::vector<std::string> worker_argv(const WorkerOptions& o) {
    std::vector<std::string> argv{"holdfast-check", "worker",
            "--id", std::to_string(o.id),
            "--slot", std::to_string(o.slot),
            "--lock-port", std::to_string(o.lock_port),
            "--resource-port", std::to_string(o.resource_port),
            "--locks", std::to_string(o.locks),
            "--lease-ms", std::to_string(o.lease.count()),
            "--timeout-ms", std::to_string(o.timeout.count()),
            "--section-ms", std::to_string(o.max_section.count()),
            "--acquire-wait-ms", std::to_string(o.acquire_wait.count()),
            "--primitive", primitive_flag(o.primitive),
            "--permits", std::to_string(o.permits),
            "--worker-seed", std::to_string(o.seed),
            "--history", o.history,
            "--status", o.status,
            "--replica-sync", o.replica_sync,
            "--replica-sync-timeout-ms", std::to_string(o.replica_sync_timeout.count())};
    if (!o.lock_url.empty()) argv.insert(argv.end(), {"--lock-url", o.lock_url});
    if (o.acl_users) argv.push_back("--acl-users");
    if (o.relock) argv.push_back("--relock");
    return argv;
}

}  // namespace

int shell_status(int wait_status) {
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
    return -1;
}

Workers::Workers(WorkerOptions base, std::string dir, int slots, std::vector<std::uint16_t> lock_ports)
    : base_(std::move(base)), dir_(std::move(dir)), slots_(slots), lock_ports_(std::move(lock_ports)) {}

Workers::~Workers() {
    for (auto& s : slots_) {
        if (s.pid <= 0) continue;
        ::kill(s.pid, SIGCONT);
        ::kill(s.pid, SIGKILL);
        ::waitpid(s.pid, nullptr, 0);
    }
}

std::string Workers::log_of(int worker) const { return dir_ + "/worker-" + std::to_string(worker) + ".err"; }

void Workers::start() {
    for (int slot = 0; slot < slots(); ++slot) spawn(slot);
}

void Workers::spawn(int slot) {
    WorkerOptions o = base_;
    o.id = next_id_++;
    o.slot = slot;
    if (!lock_ports_.empty()) o.lock_port = lock_ports_[slot];
    o.seed = base_.seed * 1000003 + static_cast<std::uint64_t>(o.id);
    o.history = dir_ + "/worker-" + std::to_string(o.id) + ".log";
    std::vector<std::string> args = worker_argv(o);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string err = log_of(o.id);

    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork of a worker");
    if (pid == 0) {
        // Dies with the coordinator, even a SIGKILLed one (a ctest timeout).
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(127);
        ::setpgid(0, 0);  // a terminal's ^C goes to the coordinator, which stops the run
        const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            ::dup2(fd, STDERR_FILENO);
            ::dup2(fd, STDOUT_FILENO);
            ::close(fd);
        }
        ::execv("/proc/self/exe", argv.data());
        ::_exit(127);
    }
    slots_[slot] = {o.id, pid};
}

std::vector<Workers::Exit> Workers::reap_unexpected() {
    std::vector<Exit> exits;
    for (int slot = 0; slot < slots(); ++slot) {
        int status = 0;
        if (slots_[slot].pid <= 0 || ::waitpid(slots_[slot].pid, &status, WNOHANG) != slots_[slot].pid) continue;
        exits.push_back({slots_[slot].worker, slot, now_ns(), shell_status(status), log_of(slots_[slot].worker)});
        slots_[slot].pid = -1;
        spawn(slot);
    }
    return exits;
}

Nanos Workers::kill_and_replace(int slot) {
    const Nanos at = now_ns();
    ::kill(slots_[slot].pid, SIGKILL);
    ::waitpid(slots_[slot].pid, nullptr, 0);
    killed_.emplace_back(slots_[slot].worker, at);
    slots_[slot].pid = -1;
    spawn(slot);
    return at;
}

std::vector<Workers::Exit> Workers::stop(Nanos deadline) {
    std::vector<Exit> bad;
    for (int slot = 0; slot < slots(); ++slot) {
        Slot& s = slots_[slot];
        if (s.pid <= 0) continue;
        int status = 0;
        pid_t done = 0;
        while ((done = ::waitpid(s.pid, &status, WNOHANG)) == 0 && now_ns() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (done == 0) {
            const Nanos at = now_ns();
            ::kill(s.pid, SIGKILL);
            ::waitpid(s.pid, &status, 0);
            killed_.emplace_back(s.worker, at);
            bad.push_back({s.worker, slot, at, -1, log_of(s.worker)});
        } else if (shell_status(status) != 0) {
            bad.push_back({s.worker, slot, now_ns(), shell_status(status), log_of(s.worker)});
        }
        s.pid = -1;
    }
    return bad;
}

}  // namespace holdfast::check
