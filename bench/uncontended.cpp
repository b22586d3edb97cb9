#include "uncontended.hpp"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "cpu.hpp"
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

namespace {

// Each caller's count on its own cache line, so counting costs no sharing.
struct alignas(64) PairCount {
    std::atomic<long> pairs{0};
    void add() { pairs.store(pairs.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
};

// The counts and the CPU spent so far, read at each end of the timed window.
struct Reading {
    std::int64_t at = 0;
    long pairs = 0;
    double client_s = 0, server_s = 0;
};

// Chains of async pairs: each pair's completion starts the next, on the loop thread.
class Chains {
public:
    Chains(Client& client, std::size_t n, std::vector<PairCount>& counts) : counts_(counts) {
        for (std::size_t i = 0; i < n; ++i)
            links_.push_back({std::make_unique<Lock>(client, "bench:many:" + std::to_string(i)),
                              "bench-chain-" + std::to_string(i)});
        for (std::size_t i = 0; i < n; ++i) next(i);
    }
    // The completions name this object: it outlives every pair (the client fails what cannot end).
    ~Chains() {
        stopping_ = true;
        std::unique_lock lock(mutex_);
        ended_changed_.wait(lock, [&] { return ended_ == links_.size(); });
    }

    // Each chain ends after the pair it is in; throws what a pair failed with.
    void stop() {
        stopping_ = true;
        std::unique_lock lock(mutex_);
        if (!ended_changed_.wait_for(lock, std::chrono::seconds(60), [&] { return ended_ == links_.size(); }))
            throw std::runtime_error("async chains: " + std::to_string(links_.size() - ended_) +
                                     " still in a pair 60 s after the stop");
        if (failure_) std::rethrow_exception(failure_);
    }

private:
    struct Link {
        std::unique_ptr<Lock> lock;
        std::string owner;
    };

    void next(std::size_t i) {
        links_[i].lock->async_lock(links_[i].owner, std::nullopt, {}, [this, i](std::exception_ptr error, bool) {
            if (error) return end(error);
            links_[i].lock->async_release(links_[i].owner, [this, i](std::exception_ptr error) {
                if (error) return end(error);
                counts_[i].add();
                if (stopping_.load(std::memory_order_relaxed)) return end(nullptr);
                next(i);
            });
        });
    }

    void end(std::exception_ptr error) {
        std::lock_guard lock(mutex_);
        if (error && !failure_) failure_ = error;
        ++ended_;
        ended_changed_.notify_all();
    }

    std::vector<PairCount>& counts_;
    std::vector<Link> links_;
    std::atomic<bool> stopping_{false};
    std::mutex mutex_;
    std::condition_variable ended_changed_;
    std::size_t ended_ = 0;
    std::exception_ptr failure_;
};

ManyPairs run_pairs(const Config& config, std::size_t callers, std::chrono::seconds duration, Callers form,
                    bool server_cpu) {
    Client client(config);
    std::atomic<bool> stop{false};
    std::vector<PairCount> counts(callers);
    std::vector<std::thread> workers;
    // Stopped and joined on every way out: a reading that throws must not leave them running.
    struct JoinAll {
        std::atomic<bool>& stop;
        std::vector<std::thread>& workers;
        ~JoinAll() {
            stop = true;
            for (auto& w : workers)
                if (w.joinable()) w.join();
        }
    } join_all{stop, workers};
    std::optional<Chains> chains;
    if (form == Callers::threads) {
        std::latch ready(static_cast<std::ptrdiff_t>(callers) + 1);
        for (std::size_t i = 0; i < callers; ++i) {
            workers.emplace_back([&, i] {
                Lock lock(client, "bench:many:" + std::to_string(i));
                warm_up(lock, 10);
                ready.arrive_and_wait();
                while (!stop.load(std::memory_order_relaxed)) {
                    lock.lock();
                    lock.unlock();
                    counts[i].add();
                }
            });
        }
        ready.arrive_and_wait();
    } else {
        chains.emplace(client, callers, counts);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // connected, scripts cached
    }
    auto read = [&] {
        Reading r;
        r.at = now_ns();
        for (const auto& c : counts) r.pairs += c.pairs.load(std::memory_order_relaxed);
        r.client_s = own_cpu_seconds();
        if (server_cpu) r.server_s = server_cpu_seconds(config);
        return r;
    };
    const Reading first = read();
    std::this_thread::sleep_for(duration);
    const Reading last = read();
    stop = true;
    for (auto& w : workers) w.join();  // each finishes the pair it is in, not counted
    if (chains) chains->stop();
    ManyPairs result;
    const double pairs = static_cast<double>(last.pairs - first.pairs);
    if (pairs <= 0) return result;
    result.pairs_per_s = pairs * 1e9 / static_cast<double>(last.at - first.at);
    result.client_us_per_pair = (last.client_s - first.client_s) * 1e6 / pairs;
    result.server_us_per_pair = (last.server_s - first.server_s) * 1e6 / pairs;
    return result;
}

}  // namespace

double run_many_threads(const Config& config, std::size_t threads, std::chrono::seconds duration) {
    return run_pairs(config, threads, duration, Callers::threads, false).pairs_per_s;
}

ManyPairs run_many(const Config& config, std::size_t callers, std::chrono::seconds duration, Callers form) {
    return run_pairs(config, callers, duration, form, true);
}

}  // namespace holdfast::bench
