#include "uncontended.hpp"

#include <atomic>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "holdfast/holdfast.hpp"

namespace holdfast::bench {
namespace {

// Enough pairs to connect every connection and get the scripts cached.
constexpr int warmup_pairs = 200;

void warm_up(Lock& lock, int pairs) {
    for (int i = 0; i < pairs; ++i) {
        lock.lock();
        lock.unlock();
    }
}

}  // namespace

SingleThread run_single_thread(const Config& config, std::chrono::seconds duration) {
    Client client(config);
    Lock lock(client, "bench:single");
    warm_up(lock, warmup_pairs);

    std::vector<std::int64_t> samples;
    samples.reserve(1 << 20);
    const std::int64_t start = now_ns();
    const std::int64_t deadline = start + std::chrono::nanoseconds(duration).count();
    std::int64_t t = start;
    while (t < deadline) {
        lock.lock();  // watchdog-renewed: the common way to hold a lock
        lock.unlock();
        const std::int64_t end = now_ns();
        samples.push_back(end - t);
        t = end;
    }
    SingleThread result;
    result.pairs = static_cast<long>(samples.size());
    result.pairs_per_s = static_cast<double>(samples.size()) * 1e9 / static_cast<double>(t - start);
    result.p50_us = percentile(samples, 50) / 1e3;
    result.p99_us = percentile(samples, 99) / 1e3;
    return result;
}

double run_many_threads(const Config& config, std::size_t threads, std::chrono::seconds duration) {
    Client client(config);
    std::atomic<bool> stop{false};
    std::atomic<long> total{0};
    std::latch ready(static_cast<std::ptrdiff_t>(threads) + 1);
    std::vector<std::thread> workers;
    for (std::size_t i = 0; i < threads; ++i) {
        workers.emplace_back([&, i] {
            Lock lock(client, "bench:many:" + std::to_string(i));
            warm_up(lock, 10);
            ready.arrive_and_wait();
            long pairs = 0;
            while (!stop.load(std::memory_order_relaxed)) {
                lock.lock();
                lock.unlock();
                ++pairs;
            }
            total += pairs;
        });
    }
    ready.arrive_and_wait();
    const std::int64_t start = now_ns();
    std::this_thread::sleep_for(duration);
    stop = true;
    for (auto& w : workers) w.join();  // each finishes the pair it is in: counted, and timed below
    const std::int64_t end = now_ns();
    return static_cast<double>(total.load()) * 1e9 / static_cast<double>(end - start);
}

}  // namespace holdfast::bench
