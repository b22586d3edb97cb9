// pair_cost: the client's CPU per uncontended lock()/unlock() pair, for
// profiling the transport (perf record -g -- pair_cost tls 64 5).
//   pair_cost plain|tls|cluster [threads=64] [seconds=5]
// Prints pairs/s and this process's user and system CPU per pair (the
// servers are other processes, so a busy machine moves pairs/s, much less
// the CPU per pair). PAIR_COST_POOL=n sets Config::connection_pool_size;
// PAIR_COST_PERF=instructions:u,instructions:k adds perf stat's counts per pair.
// PAIR_COST_ASYNC=1: `threads` chains of async_lock -> async_release -> ...
// instead of blocking threads, so no thread waits or wakes per pair.
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "holdfast/holdfast.hpp"
#include "redis_cluster.hpp"
#include "redis_server.hpp"
#include "test_certs.hpp"

namespace {

double cpu_us(const timeval& t) { return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec); }

void run(holdfast::Config config, std::size_t threads, std::chrono::seconds duration) {
    if (const char* pool = std::getenv("PAIR_COST_POOL")) config.connection_pool_size = std::stoul(pool);
    holdfast::Client client(config);
    std::atomic<bool> stop{false};
    // Each worker's count on its own cache line, so counting costs no sharing.
    struct alignas(64) Count {
        std::atomic<long> pairs{0};
    };
    std::vector<Count> counts(threads);
    std::latch ready(static_cast<std::ptrdiff_t>(threads) + 1);
    std::vector<std::thread> workers;
    // Async chains: each pair's completion starts the next, on the loop thread.
    struct Chain {
        std::unique_ptr<holdfast::Lock> lock;
        std::string owner;
    };
    std::vector<Chain> chains;
    std::atomic<std::size_t> chains_ended{0};
    std::function<void(std::size_t)> next_pair = [&](std::size_t i) {
        Chain& c = chains[i];
        c.lock->async_lock(c.owner, std::nullopt, {}, [&, i](std::exception_ptr error, bool) {
            if (error) std::abort();
            chains[i].lock->async_release(chains[i].owner, [&, i](std::exception_ptr error) {
                if (error) std::abort();
                auto& pairs = counts[i].pairs;
                pairs.store(pairs.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
                if (stop.load(std::memory_order_relaxed)) {
                    ++chains_ended;
                    return;
                }
                next_pair(i);
            });
        });
    };
    if (std::getenv("PAIR_COST_ASYNC")) {
        for (std::size_t i = 0; i < threads; ++i)
            chains.push_back({std::make_unique<holdfast::Lock>(client, "bench:many:" + std::to_string(i)),
                              "async-owner-" + std::to_string(i)});
        for (std::size_t i = 0; i < threads; ++i) {
            ready.count_down();
            next_pair(i);
        }
    } else
    for (std::size_t i = 0; i < threads; ++i)
        workers.emplace_back([&, i] {
            holdfast::Lock lock(client, "bench:many:" + std::to_string(i));
            for (int w = 0; w < 10; ++w) {
                lock.lock();
                lock.unlock();
            }
            ready.arrive_and_wait();
            auto& pairs = counts[i].pairs;
            while (!stop.load(std::memory_order_relaxed)) {
                lock.lock();
                lock.unlock();
                pairs.store(pairs.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
            }
        });
    ready.arrive_and_wait();
    rusage before{}, after{};
    ::getrusage(RUSAGE_SELF, &before);
    auto sum = [&] {
        long n = 0;
        for (auto& c : counts) n += c.pairs.load(std::memory_order_relaxed);
        return n;
    };
    const long first = sum();
    const auto start = holdfast::bench::now_ns();
    if (const char* events = std::getenv("PAIR_COST_PERF")) {
        // perf stat on this process (every thread) for the run: counts such as instructions per pair.
        const std::string command = "perf stat -x, -e " + std::string(events) + " -p " + std::to_string(::getpid()) +
                                    " -- sleep " + std::to_string(duration.count()) + " 2>/tmp/pair_cost.perf";
        if (std::system(command.c_str()) != 0) std::fprintf(stderr, "perf stat failed\n");
    } else {
        std::this_thread::sleep_for(duration);
    }
    const auto end = holdfast::bench::now_ns();
    ::getrusage(RUSAGE_SELF, &after);
    const long last = sum();
    stop = true;
    for (auto& w : workers) w.join();
    while (chains_ended.load() < chains.size()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const double pairs = static_cast<double>(last - first);
    const double user = cpu_us(after.ru_utime) - cpu_us(before.ru_utime);
    const double sys = cpu_us(after.ru_stime) - cpu_us(before.ru_stime);
    std::printf("pairs/s %.0f  cpu/pair %.2f us (user %.2f, sys %.2f)  ctx switches vol %ld invol %ld per pair %.2f\n",
                pairs * 1e9 / static_cast<double>(end - start), (user + sys) / pairs, user / pairs, sys / pairs,
                after.ru_nvcsw - before.ru_nvcsw, after.ru_nivcsw - before.ru_nivcsw,
                static_cast<double>(after.ru_nvcsw - before.ru_nvcsw + after.ru_nivcsw - before.ru_nivcsw) / pairs);
    if (!std::getenv("PAIR_COST_PERF")) return;
    // perf's CSV: value,unit,event,...
    if (FILE* f = std::fopen("/tmp/pair_cost.perf", "r")) {
        char line[512];
        while (std::fgets(line, sizeof line, f)) {
            char* comma = std::strchr(line, ',');
            if (!comma || line[0] < '0' || line[0] > '9') continue;
            char* event = std::strchr(comma + 1, ',');
            if (!event) continue;
            char* end = std::strchr(event + 1, ',');
            if (end) *end = 0;
            std::printf("  %s per pair: %.3f\n", event + 1, std::atof(line) / pairs);
        }
        std::fclose(f);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::string which = argc > 1 ? argv[1] : "plain";
    const std::size_t threads = argc > 2 ? std::stoul(argv[2]) : 64;
    const std::chrono::seconds duration(argc > 3 ? std::stol(argv[3]) : 5);
    namespace support = holdfast::support;
    if (which == "plain") {
        support::RedisServer server;
        run(holdfast::Config::from_uri(server.url()), threads, duration);
    } else if (which == "tls") {
        support::TestCerts certs;
        support::RedisServer server(support::TlsServer{certs.server_cert, certs.server_key, certs.ca, false});
        auto config = holdfast::Config::from_uri(server.tls_url());
        config.tls.ca_file = certs.ca;
        run(config, threads, duration);
    } else if (which == "cluster") {
        support::RedisCluster cluster(3);
        run(holdfast::Config::from_uri(cluster.url()), threads, duration);
    } else {
        std::fprintf(stderr, "usage: pair_cost plain|tls|cluster [threads] [seconds]\n");
        return 2;
    }
}
