// blocking_floor: what any blocking caller costs on this machine, without holdfast,
// for reading holdfast's blocking figures against (BENCHMARKS.md, issue 38).
//   blocking_floor hiredis [threads=64] [seconds=5]
//     each thread its own hiredis connection to a fresh redis-server, sending the
//     EVALSHA acquire and release lock() and unlock() send (one sleep per reply,
//     in the socket read: the least a blocking client can do without spinning);
//   blocking_floor handoff [threads=64] [seconds=5]
//     no server and no I/O: each thread hands a request to one loop thread and
//     sleeps on a futex until it answers, twice per pair (the sleeps and wake-ups
//     of a caller that waits for another thread, and nothing else).
// Prints pairs/s, this process's CPU and context switches per pair and the pair p50;
// hiredis also the ceiling lock_bench reads its figures against, from the same server.
#include <hiredis/hiredis.h>
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ceiling.hpp"
#include "common.hpp"
#include "holdfast_scripts.hpp"
#include "redis_server.hpp"

namespace {

using holdfast::bench::now_ns;

// One caller's pairs and each pair's time (ns).
struct Caller {
    std::vector<std::int64_t> pairs;
};

double cpu_us(const timeval& t) { return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec); }

// Runs `pair` on each of `threads` threads for `duration`; prints the figures.
void measure(const char* what, std::size_t threads, std::chrono::seconds duration,
             const std::function<std::function<void()>(std::size_t)>& caller_for) {
    std::atomic<bool> stop{false};
    std::vector<Caller> callers(threads);
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    const std::int64_t start = now_ns();
    std::vector<std::thread> pool;
    for (std::size_t i = 0; i < threads; ++i)
        pool.emplace_back([&, i] {
            const std::function<void()> pair = caller_for(i);
            auto& mine = callers[i].pairs;
            mine.reserve(1 << 16);
            for (std::int64_t t = now_ns(); !stop.load(std::memory_order_relaxed);) {
                pair();
                const std::int64_t end = now_ns();
                mine.push_back(end - t);
                t = end;
            }
        });
    std::this_thread::sleep_for(duration);
    stop = true;
    for (auto& t : pool) t.join();
    const double seconds = static_cast<double>(now_ns() - start) / 1e9;
    getrusage(RUSAGE_SELF, &after);
    std::vector<std::int64_t> all;
    for (auto& c : callers) all.insert(all.end(), c.pairs.begin(), c.pairs.end());
    const double pairs = static_cast<double>(all.size());
    const double cpu = cpu_us(after.ru_utime) - cpu_us(before.ru_utime) + cpu_us(after.ru_stime) -
                       cpu_us(before.ru_stime);
    const double switches = static_cast<double>((after.ru_nvcsw - before.ru_nvcsw) + (after.ru_nivcsw - before.ru_nivcsw));
    std::printf("%s, %zu threads: %.0f pairs/s, %.1f us CPU per pair, %.2f context switches per pair, pair p50 %.1f us\n",
                what, threads, pairs / seconds, cpu / pairs, switches / pairs,
                holdfast::bench::percentile(all, 50) / 1e3);
}

redisReply* command(redisContext* c, const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (const auto& a : args) {
        argv.push_back(a.data());
        lengths.push_back(a.size());
    }
    auto* reply = static_cast<redisReply*>(
        redisCommandArgv(c, static_cast<int>(args.size()), argv.data(), lengths.data()));
    if (!reply || reply->type == REDIS_REPLY_ERROR)
        throw std::runtime_error(std::string("blocking_floor: ") + (reply ? reply->str : c->errstr));
    return reply;
}

void hiredis_floor(std::size_t threads, std::chrono::seconds duration) {
    holdfast::support::RedisServer server;
    const auto& acquire = *holdfast::scripts::lock_acquire.trusted;  // the bench's user may run everything
    const auto& release = holdfast::scripts::lock_release;
    std::vector<redisContext*> connections;
    for (std::size_t i = 0; i < threads; ++i) {
        redisContext* c = redisConnect("127.0.0.1", server.port());
        if (!c || c->err) throw std::runtime_error("blocking_floor: cannot connect to the server it started");
        connections.push_back(c);
    }
    freeReplyObject(command(connections[0], {"SCRIPT", "LOAD", acquire.body}));
    freeReplyObject(command(connections[0], {"SCRIPT", "LOAD", release.body}));
    // As lock/kind.cpp sends them for lock() and unlock() (bench/ceiling.cpp's arguments).
    measure("hiredis, own connection each", threads, duration, [&](std::size_t i) {
        const std::string key = "floor:" + std::to_string(i), tag = "{" + key + "}";
        const std::string owner = "6a1f0c2e-5b3d-4e7a-9c1b-2d4f6a8b0c1e:" + std::to_string(i + 1);
        const std::vector<std::string> take{"EVALSHA", acquire.sha1, "1", key, "30000", owner,
                                            "redisson_lock__channel:" + tag, "publish", "",
                                            "holdfast_lock_waiters:" + tag, "holdfast_lock_handoff:" + tag};
        const std::vector<std::string> give{"EVALSHA", release.sha1, "1", key, "0", "30000", owner, "publish",
                                            "redisson_lock__channel:" + tag, "100", "holdfast_lock_waiters:" + tag,
                                            "holdfast_lock_handoff:" + tag};
        redisContext* c = connections[i];
        return std::function<void()>([c, take, give] {
            freeReplyObject(command(c, take));
            freeReplyObject(command(c, give));
        });
    });
    for (auto* c : connections) redisFree(c);
    const holdfast::bench::Ceiling ceiling = holdfast::bench::measure_ceiling(server.port(), {});
    std::printf("ceiling, same server: 2 x `-c 1` acquire p50 %.1f us; pipelined acquire / 2 %.0f pairs/s\n",
                2 * ceiling.acquire_serial.p50_ms * 1e3, ceiling.acquire_pipelined.ops_per_s / 2);
}

// A caller's sleep until the loop thread answers: the futex holdfast's Parker uses.
struct Sleep {
    std::atomic<std::uint32_t> state{0};  // 0 waiting, 1 answered, 2 asleep
    void answer() {
        if (state.exchange(1) == 2) syscall(SYS_futex, &state, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    }
    void wait() {
        std::uint32_t waiting = 0;
        if (!state.compare_exchange_strong(waiting, 2)) return;
        while (state.load() != 1) syscall(SYS_futex, &state, FUTEX_WAIT_PRIVATE, 2, nullptr, nullptr, 0);
    }
};

void handoff_floor(std::size_t threads, std::chrono::seconds duration) {
    std::mutex mutex;
    std::condition_variable wake;
    std::vector<Sleep*> queue;
    bool loop_asleep = false, done = false;
    std::thread loop([&] {
        std::vector<Sleep*> batch;
        for (;;) {
            {
                std::unique_lock lock(mutex);
                loop_asleep = true;
                wake.wait(lock, [&] { return !queue.empty() || done; });
                loop_asleep = false;
                if (queue.empty()) return;  // done, and nobody waits
                batch.swap(queue);
            }
            for (Sleep* s : batch) s->answer();
            batch.clear();
        }
    });
    measure("handoff to a loop thread, no server", threads, duration, [&](std::size_t) {
        return std::function<void()>([&] {
            for (int call = 0; call < 2; ++call) {
                Sleep sleep;
                bool must_wake;
                {
                    std::lock_guard lock(mutex);
                    queue.push_back(&sleep);
                    must_wake = loop_asleep;
                }
                if (must_wake) wake.notify_one();
                sleep.wait();
            }
        });
    });
    {
        std::lock_guard lock(mutex);
        done = true;
    }
    wake.notify_one();
    loop.join();
}

}  // namespace

int main(int argc, char** argv) {
    const std::string which = argc > 1 ? argv[1] : "";
    const std::size_t threads = argc > 2 ? std::stoul(argv[2]) : 64;
    const std::chrono::seconds duration(argc > 3 ? std::stol(argv[3]) : 5);
    if (which == "hiredis") return hiredis_floor(threads, duration), 0;
    if (which == "handoff") return handoff_floor(threads, duration), 0;
    std::fprintf(stderr, "usage: blocking_floor hiredis|handoff [threads] [seconds]\n");
    return 2;
}
