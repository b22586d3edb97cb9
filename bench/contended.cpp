#include "contended.hpp"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <cstdio>
#include <new>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common.hpp"
#include "holdfast/holdfast.hpp"
#include "sync_redis.hpp"

namespace holdfast::bench {
namespace {

constexpr const char* lock_name = "bench:contended";
// In the lock's slot (its hash tag is the lock's name), so in a cluster one master holds both.
constexpr const char* counter_key = "{bench:contended}:counter";
constexpr int max_processes = 128;
// Per worker; more handoffs go uncounted in the percentiles. The shared region
// is 128 x 512 KiB of address space, but only the pages written are made.
constexpr std::size_t max_waits = 1 << 16;

struct WorkerResult {
    long long sections = 0;
    long long handoffs = 0;
    std::int64_t longest_lock_ns = 0;
    std::int64_t end_ns = 0;
    std::size_t waits_n = 0;
    int failed = 0;
    char error[256] = {};
    std::int64_t waits[max_waits];
};

// One anonymous MAP_SHARED region, made before fork, seen by every worker.
// Lock-free atomics work across processes; what a holder writes is seen by
// the next holder because the lock itself (through Redis) orders them.
struct Shared {
    std::atomic<int> ready{0};
    std::atomic<std::int64_t> start_ns{0};  // 0 until the parent starts the run
    std::atomic<std::int64_t> deadline_ns{0};
    std::atomic<std::int64_t> last_unlock_ns{0};  // when the last holder called unlock()
    std::atomic<int> last_owner{-1};               // worker index of the last holder
    std::atomic<long long> handoffs{0};            // owner changes so far, all workers
    WorkerResult workers[max_processes];
};

Shared* map_shared() {
    void* memory = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) throw std::runtime_error("mmap of the shared results failed");
    return new (memory) Shared;
}

// What holdfast sends for lock() and unlock(), as top-level commands. Commands
// that the scripts run inside (hexists, hincrby, publish, ...) also appear in
// INFO commandstats and are left out, as are the critical section's GET/SET,
// our INFO and the connection handshakes' PING.
const std::set<std::string> lock_commands{"evalsha", "eval", "evalsha_ro", "eval_ro",
                                          "subscribe", "unsubscribe", "psubscribe", "punsubscribe",
                                          "ssubscribe", "sunsubscribe", "script|load", "script|exists"};

// cmdstat_<name>:calls=<n>,... -> name -> n
std::map<std::string, long long> command_stats(support::SyncRedis& raw) {
    std::map<std::string, long long> calls;
    std::istringstream in(raw.string({"INFO", "commandstats"}));
    for (std::string line; std::getline(in, line);) {
        const auto colon = line.find(":calls=");
        if (line.rfind("cmdstat_", 0) != 0 || colon == std::string::npos) continue;
        calls[line.substr(8, colon - 8)] = std::stoll(line.substr(colon + 7));
    }
    return calls;
}

// Taking and giving back the primitive, whichever it is.
struct Turn {
    std::function<void()> take, give;
};

Turn turn_of(Client& client, Primitive primitive, std::unique_ptr<Lock>& lock, std::unique_ptr<Semaphore>& semaphore) {
    switch (primitive) {
        case Primitive::semaphore:
            semaphore = std::make_unique<Semaphore>(client, lock_name);
            semaphore->try_set_permits(1);
            return {[&semaphore] { semaphore->acquire(); }, [&semaphore] { semaphore->release(); }};
        case Primitive::fair_lock: lock = std::make_unique<FairLock>(client, lock_name); break;
        case Primitive::lock: lock = std::make_unique<Lock>(client, lock_name); break;
    }
    return {[&lock] { lock->lock(); }, [&lock] { lock->unlock(); }};
}

void run_worker(Shared& shared, Primitive primitive, int me, const ContendedTarget& target, WorkerResult& out) {
    Client client(target.lock);
    std::unique_ptr<Lock> lock;
    std::unique_ptr<Semaphore> semaphore;
    const Turn turn = turn_of(client, primitive, lock, semaphore);
    support::SyncRedis data(target.port);  // the protected data lives outside holdfast
    ++shared.ready;
    // 1 ms naps: 128 workers napping 100 µs kept two cores busy with wake-ups while the last ones connected.
    while (shared.start_ns.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));

    const std::int64_t deadline = shared.deadline_ns.load();
    while (now_ns() < deadline) {
        const std::int64_t asked = now_ns();
        turn.take();
        const std::int64_t acquired = now_ns();
        out.longest_lock_ns = std::max(out.longest_lock_ns, acquired - asked);
        const int previous = shared.last_owner.exchange(me);
        if (previous >= 0 && previous != me) {
            ++out.handoffs;
            ++shared.handoffs;
            if (out.waits_n < max_waits) out.waits[out.waits_n++] = acquired - shared.last_unlock_ns.load();
        }
        // Read-modify-write with no atomicity of its own: only the lock keeps updates from being lost.
        const long long value = data.integer({"GET", counter_key});
        data.command({"SET", counter_key, std::to_string(value + 1)});
        ++out.sections;
        shared.last_unlock_ns.store(now_ns());
        turn.give();
    }
    out.end_ns = now_ns();
}

[[noreturn]] void worker_main(Shared& shared, Primitive primitive, int me, const ContendedTarget& target) {
    WorkerResult& out = shared.workers[me];
    try {
        run_worker(shared, primitive, me, target, out);
    } catch (const std::exception& e) {
        out.failed = 1;
        std::snprintf(out.error, sizeof out.error, "%s", e.what());
    }
    std::_Exit(out.failed);  // no atexit handlers: they belong to the parent (its redis-server among them)
}

// Starts the run once every worker has its Client, or after 60 s regardless
// (a worker that failed to connect must not hang the others); returns how
// many were ready.
int start_when_ready(Shared& shared, int processes, std::chrono::seconds duration) {
    const std::int64_t give_up = now_ns() + std::chrono::nanoseconds(std::chrono::seconds(60)).count();
    while (shared.ready.load() < processes && now_ns() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const int ready = shared.ready.load();
    const std::int64_t start = now_ns();
    shared.deadline_ns = start + std::chrono::nanoseconds(duration).count();
    shared.start_ns = start;
    return ready;
}

void reap(const std::vector<pid_t>& pids, const Shared& shared) {
    std::string errors;
    for (std::size_t i = 0; i < pids.size(); ++i) {
        int status = 0;
        ::waitpid(pids[i], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            errors += "\n  worker " + std::to_string(i) + ": " +
                      (shared.workers[i].failed ? shared.workers[i].error : "died (status " + std::to_string(status) + ")");
    }
    if (!errors.empty()) throw std::runtime_error("contended run failed:" + errors);
}

void summarise(const Shared& shared, int processes, Contended& result) {
    std::vector<std::int64_t> waits;
    std::int64_t end = shared.start_ns;
    for (int i = 0; i < processes; ++i) {
        const WorkerResult& w = shared.workers[i];
        result.sections += w.sections;
        result.handoffs += w.handoffs;
        waits.insert(waits.end(), w.waits, w.waits + w.waits_n);
        end = std::max(end, w.end_ns);
        result.longest_lock_ms = std::max(result.longest_lock_ms, static_cast<double>(w.longest_lock_ns) / 1e6);
    }
    result.seconds = static_cast<double>(end - shared.start_ns) / 1e9;
    result.sections_per_s = static_cast<double>(result.sections) / result.seconds;
    result.handoffs_per_s = static_cast<double>(result.handoffs) / result.seconds;
    result.wait_p50_us = percentile(waits, 50) / 1e3;
    result.wait_p99_us = percentile(waits, 99) / 1e3;
}

// holdfast's top-level commands between two INFO commandstats readings, per command.
std::map<std::string, long long> lock_calls(const std::map<std::string, long long>& before,
                                            const std::map<std::string, long long>& after) {
    std::map<std::string, long long> calls;
    for (const auto& [name, count] : after) {
        if (!lock_commands.count(name)) continue;
        const auto it = before.find(name);
        const long long delta = count - (it == before.end() ? 0 : it->second);
        if (delta != 0) calls[name] = delta;
    }
    return calls;
}

long long total(const std::map<std::string, long long>& calls) {
    long long sum = 0;
    for (const auto& [name, count] : calls) sum += count;
    return sum;
}

// `warm`: the readings (commands, owner changes) after the warm-up.
void count_commands(const std::map<std::string, long long>& before, const std::map<std::string, long long>& warm,
                    long long warm_handoffs, const std::map<std::string, long long>& after, Contended& result) {
    result.command_calls = lock_calls(before, after);
    result.lock_commands = total(result.command_calls);
    if (result.handoffs > 0)
        result.commands_per_handoff_whole =
            static_cast<double>(result.lock_commands) / static_cast<double>(result.handoffs);
    const long long steady_handoffs = result.handoffs - warm_handoffs;
    if (steady_handoffs > 0)
        result.commands_per_handoff =
            static_cast<double>(total(lock_calls(warm, after))) / static_cast<double>(steady_handoffs);
}

}  // namespace

std::string describe(Primitive primitive) {
    switch (primitive) {
        case Primitive::fair_lock: return "FairLock";
        case Primitive::semaphore: return "Semaphore (1 permit)";
        case Primitive::lock: break;
    }
    return "Lock";
}

const char* const contended_lock_name = lock_name;

Contended run_contended(const ContendedTarget& target, Primitive primitive, int processes,
                        std::chrono::seconds duration) {
    if (processes < 1 || processes > max_processes)
        throw std::invalid_argument("run_contended: 1.." + std::to_string(max_processes) + " processes");
    Shared* shared = map_shared();
    support::SyncRedis raw(target.port);
    raw.command({"DEL", lock_name, "redisson_lock_queue:{bench:contended}", "redisson_lock_timeout:{bench:contended}"});
    raw.command({"SET", counter_key, "0"});
    const auto before = command_stats(raw);

    std::fflush(nullptr);  // children must not repeat our buffered output
    std::vector<pid_t> pids;
    for (int i = 0; i < processes; ++i) {
        const pid_t pid = ::fork();
        if (pid < 0) throw std::runtime_error("fork failed");
        if (pid == 0) worker_main(*shared, primitive, i, target);
        pids.push_back(pid);
    }
    const int ready = start_when_ready(*shared, processes, duration);
    // Every process has waited once by the end of the first quarter (each
    // tries at the start): its first SUBSCRIBE is behind it.
    std::this_thread::sleep_for(std::max<std::chrono::nanoseconds>(duration / 4, std::chrono::milliseconds(250)));
    const auto warm = command_stats(raw);
    const long long warm_handoffs = shared->handoffs.load();
    reap(pids, *shared);

    Contended result;
    result.primitive = primitive;
    result.processes = processes;
    result.ready_at_start = ready;
    summarise(*shared, processes, result);
    count_commands(before, warm, warm_handoffs, command_stats(raw), result);
    result.counter = raw.integer({"GET", counter_key});
    result.lost_updates = result.sections - result.counter;
    ::munmap(shared, sizeof(Shared));
    return result;
}

}  // namespace holdfast::bench
