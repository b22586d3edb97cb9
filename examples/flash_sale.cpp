// flash_sale: the flash sale of the Redisson articles, on holdfast.
//
// P processes x T threads buy goods:1000:1 one unit at a time with a plain
// read-modify-write: GET the stock, think, SET stock-1, RPUSH an order. Run
// under lock:goods:1000:1 the sale is exact; run again without the lock, the
// same code oversells. docs/demo.md explains how to read the table.
// --cluster runs it on a private 3-master Redis Cluster: the lock lives on
// whichever master its name's slot says, the goods on the master of theirs.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "holdfast/holdfast.hpp"
#include "redis_cluster.hpp"
#include "redis_server.hpp"
#include "sync_redis.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using holdfast::support::SyncRedis;

// The business data shares one hash tag, so in a cluster it is on one master
// (the stock's: "goods:1000:1" hashes as its tag does) and one connection serves it.
const std::string kStockKey = "goods:1000:1";
const std::string kOrdersKey = "orders:{goods:1000:1}";
const std::string kLastOwnerKey = "demo:last_owner:{goods:1000:1}";
const std::string kLockName = "lock:goods:1000:1";
constexpr auto kProgressEvery = 250ms;
constexpr auto kPollEvery = 5ms;  // how soon the parent notices the sale is over (bounds the timing error)

struct Options {
    int stock = 200;
    int processes = 4;
    int threads = 8;
    std::string url;  // empty: start a private redis-server
    bool cluster = false;  // with no url: a private 3-master cluster instead
    int timeout_s = 120;
};

// What one thread, then one process, did. Plain integers: it crosses a pipe as bytes.
struct Counters {
    long long purchases = 0;
    long long waits = 0;     // acquisitions where try_lock() failed and lock() had to wait
    long long handoffs = 0;  // acquisitions where someone else held the lock last
    long long errors = 0;

    Counters& operator+=(const Counters& o) {
        purchases += o.purchases;
        waits += o.waits;
        handoffs += o.handoffs;
        errors += o.errors;
        return *this;
    }
};

struct SaleResult {
    bool locked = false;
    long long initial = 0, final_stock = 0, orders = 0;
    Counters totals;
    std::vector<std::pair<pid_t, Counters>> processes;
    double seconds = 0;
    bool stopped = false;  // interrupted or timed out: the numbers are partial

    long long sold() const { return initial - final_stock; }
    long long oversold() const { return orders - sold(); }
    bool correct() const { return !stopped && totals.errors == 0 && final_stock == 0 && orders == initial; }
};

volatile std::sig_atomic_t g_interrupted = 0;
void on_signal(int) { g_interrupted = 1; }

// SyncRedis knows only host and port; AUTH and SELECT come from the URL.
// In a cluster it connects to the master serving the goods' slot.
std::unique_ptr<SyncRedis> connect(const holdfast::Config& config) {
    if (!config.unix_socket.empty())
        throw std::invalid_argument("unix sockets are not supported here; use redis://host:port");
    if (config.tls.enabled) throw std::invalid_argument("TLS is not supported here; use redis:// or redis-cluster://");
    if (config.topology == holdfast::Topology::sentinel)
        throw std::invalid_argument("Sentinel is not supported here; give the master as redis://host:port");
    if (config.topology == holdfast::Topology::cluster) {
        if (config.servers.empty()) throw std::invalid_argument("a cluster URL needs a seed node");
        holdfast::Config seed = config;
        seed.topology = holdfast::Topology::single;
        seed.host = config.servers.front().host;
        seed.port = config.servers.front().port;
        auto redis = connect(seed);
        const long long slot = redis->integer({"CLUSTER", "KEYSLOT", kStockKey});
        const auto slots = redis->command({"CLUSTER", "SLOTS"});
        for (std::size_t i = 0; slots->type == REDIS_REPLY_ARRAY && i < slots->elements; ++i) {
            const redisReply* range = slots->element[i];
            if (range->element[0]->integer > slot || range->element[1]->integer < slot) continue;
            const redisReply* master = range->element[2];
            seed.host = std::string(master->element[0]->str, master->element[0]->len);
            if (seed.host.empty()) seed.host = config.servers.front().host;  // "" means the node asked
            seed.port = static_cast<std::uint16_t>(master->element[1]->integer);
            return connect(seed);
        }
        throw std::runtime_error("no cluster node serves slot " + std::to_string(slot) + " of " + kStockKey +
                                 " (CLUSTER SLOTS); is the cluster up?");
    }
    auto redis = std::make_unique<SyncRedis>(config.host, config.port);
    if (!config.password.empty()) {
        std::vector<std::string> auth{"AUTH"};
        if (!config.username.empty()) auth.push_back(config.username);
        auth.push_back(config.password);
        redis->string(auth);
    }
    if (config.database != 0) redis->string({"SELECT", std::to_string(config.database)});
    return redis;
}

// ---------------------------------------------------------------- buyers (child processes)

// The business step, unprotected by itself. False once sold out.
bool buy_one(SyncRedis& redis, const std::string& buyer, long long seq, std::mt19937& rng) {
    const long long stock = redis.integer({"GET", kStockKey});
    if (stock <= 0) return false;
    // The gap between read and write is where, without a lock, others read the same stock.
    std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 1000)(rng)));
    redis.string({"SET", kStockKey, std::to_string(stock - 1)});
    redis.integer({"RPUSH", kOrdersKey, buyer + ":" + std::to_string(seq)});
    return true;
}

// buy_one under the lock, counting waits and handoffs on the way.
bool buy_one_locked(holdfast::Lock& lock, SyncRedis& redis, const std::string& buyer, Counters& counters,
                    std::mt19937& rng) {
    if (!lock.try_lock()) {
        ++counters.waits;
        lock.lock();
    }
    // unlock() never throws (a failed release is reported as an event), so
    // the guard may release it, also when the step throws.
    std::unique_lock guard(lock, std::adopt_lock);
    // Only the holder writes the last owner, so a changed value is a handoff between buyers.
    const std::string previous = redis.string({"GETSET", kLastOwnerKey, buyer});
    if (!previous.empty() && previous != buyer) ++counters.handoffs;
    return buy_one(redis, buyer, counters.purchases, rng);
}

// One buyer thread: its own Redis connection, buying until sold out. lock null: no lock.
Counters buyer_thread(const holdfast::Config& config, holdfast::Lock* lock, int thread) {
    Counters counters;
    const std::string buyer = std::to_string(::getpid()) + ":" + std::to_string(thread);
    try {
        auto redis = connect(config);
        std::mt19937 rng(std::random_device{}());
        while (lock ? buy_one_locked(*lock, *redis, buyer, counters, rng)
                    : buy_one(*redis, buyer, counters.purchases, rng))
            ++counters.purchases;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "flash_sale: buyer %s: %s\n", buyer.c_str(), e.what());
        ++counters.errors;
    }
    return counters;
}

// A buyer process: one Client shared by all its threads, as one service instance would run.
// Reports its totals on report_fd and exits without returning.
[[noreturn]] void buyer_process(const Options& options, const holdfast::Config& config, bool locked,
                                int report_fd) {
    std::signal(SIGINT, SIG_DFL);  // Ctrl-C ends buyers at once; the parent cleans up
    std::signal(SIGTERM, SIG_DFL);
    Counters total;
    try {
        std::optional<holdfast::Client> client;
        std::optional<holdfast::Lock> lock;
        if (locked) {
            client.emplace(config);
            lock.emplace(*client, kLockName);  // one handle, shared: Lock is thread-safe
        }
        std::vector<Counters> results(options.threads);
        std::vector<std::thread> threads;
        for (int t = 0; t < options.threads; ++t)
            threads.emplace_back([&, t] { results[t] = buyer_thread(config, lock ? &*lock : nullptr, t); });
        for (auto& thread : threads) thread.join();
        for (const auto& r : results) total += r;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "flash_sale: buyer process %d: %s\n", static_cast<int>(::getpid()), e.what());
        ++total.errors;
    }
    const bool reported = ::write(report_fd, &total, sizeof total) == static_cast<ssize_t>(sizeof total);
#if defined(__SANITIZE_ADDRESS__)
    __lsan_do_leak_check();  // _exit skips the exit-time check, and the buyers are where the library runs
#endif
    // _exit: fork copied the parent's objects (its redis-server among them); they are not ours to destroy.
    ::_exit(reported && total.errors == 0 ? 0 : 1);
}

// ---------------------------------------------------------------- the sale (parent)

struct Child {
    pid_t pid = -1;
    int fd = -1;  // read end of the child's report pipe
    bool done = false;
    Counters counters;
};

Child spawn_buyer(const Options& options, const holdfast::Config& config, bool locked) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
    const pid_t pid = ::fork();  // the parent has no threads, so the child starts from a sane state
    if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
    if (pid == 0) {
        ::close(fds[0]);
        buyer_process(options, config, locked, fds[1]);
    }
    ::close(fds[1]);
    Child child;
    child.pid = pid;
    child.fd = fds[0];
    return child;
}

// Takes a finished child's report; one that died without reporting counts as an error.
void reap(Child& child, int status) {
    const bool reported = ::read(child.fd, &child.counters, sizeof child.counters) ==
                          static_cast<ssize_t>(sizeof child.counters);
    if (!reported || !WIFEXITED(status)) child.counters = Counters{.errors = 1};
    ::close(child.fd);
    child.done = true;
}

void stop_all(std::vector<Child>& children) {
    for (auto& child : children)
        if (!child.done) ::kill(child.pid, SIGKILL);
    for (auto& child : children) {
        int status = 0;
        if (!child.done && ::waitpid(child.pid, &status, 0) == child.pid) reap(child, status);
    }
}

// One progress line: redrawn in place on a terminal, plain lines in a log.
void show_progress(SyncRedis& redis, const char* label, Clock::time_point start, bool last) {
    static const bool tty = ::isatty(STDERR_FILENO);
    const long long stock = redis.integer({"GET", kStockKey});
    const long long orders = redis.integer({"LLEN", kOrdersKey});
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::fprintf(stderr, "%s%-13s stock %5lld left, %5lld orders, %5.1f s%s", tty ? "\r\033[K" : "", label, stock,
                 orders, seconds, tty && !last ? "" : "\n");
}

SaleResult run_sale(const Options& options, const holdfast::Config& config, SyncRedis& redis, bool locked) {
    const char* label = locked ? "with lock" : "without lock";
    redis.integer({"DEL", kOrdersKey, kLastOwnerKey});
    redis.string({"SET", kStockKey, std::to_string(options.stock)});

    SaleResult result;
    result.locked = locked;
    result.initial = options.stock;
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::seconds(options.timeout_s);
    std::vector<Child> children;
    for (int p = 0; p < options.processes; ++p) children.push_back(spawn_buyer(options, config, locked));

    auto next_progress = start;
    for (std::size_t running = children.size(); running > 0;) {
        for (auto& child : children) {
            int status = 0;
            if (!child.done && ::waitpid(child.pid, &status, WNOHANG) == child.pid) {
                reap(child, status);
                --running;
            }
        }
        if (running > 0 && (g_interrupted || Clock::now() > deadline)) {
            if (!g_interrupted)
                std::fprintf(stderr, "flash_sale: %s: not over after %d s, stopping it\n", label, options.timeout_s);
            result.stopped = true;
            stop_all(children);
            break;
        }
        if (running > 0 && Clock::now() >= next_progress) {
            show_progress(redis, label, start, false);
            next_progress += kProgressEvery;
        }
        if (running > 0) std::this_thread::sleep_for(kPollEvery);
    }
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    show_progress(redis, label, start, true);

    result.final_stock = redis.integer({"GET", kStockKey});
    result.orders = redis.integer({"LLEN", kOrdersKey});
    for (const auto& child : children) {
        result.processes.emplace_back(child.pid, child.counters);
        result.totals += child.counters;
    }
    return result;
}

// ---------------------------------------------------------------- the report

template <class... Args>
std::string format(const char* fmt, Args... args) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, fmt, args...);
    return buffer;
}

void row(const char* name, const std::string& with_lock, const std::string& without_lock) {
    std::printf("%-17s %15s %15s\n", name, with_lock.c_str(), without_lock.c_str());
}

void print_table(const SaleResult& a, const SaleResult& b) {
    auto n = [](long long v) { return std::to_string(v); };
    auto rate = [](const SaleResult& r) { return format("%.0f orders/s", r.orders / std::max(r.seconds, 1e-9)); };
    std::printf("\n");
    row("", "with lock", "without lock");
    row("initial stock", n(a.initial), n(b.initial));
    row("final stock", n(a.final_stock), n(b.final_stock));
    row("units sold", n(a.sold()), n(b.sold()));
    row("orders recorded", n(a.orders), n(b.orders));
    row("oversold", n(a.oversold()), n(b.oversold()));
    row("lock waits", n(a.totals.waits), "-");
    row("handoffs", n(a.totals.handoffs), "-");
    row("elapsed", format("%.2f s", a.seconds), format("%.2f s", b.seconds));
    row("throughput", rate(a), rate(b));
}

void print_processes(const SaleResult& sale) {
    const std::string title = std::string("per process (") + (sale.locked ? "with lock)" : "without lock)");
    std::printf("\n%-28s %9s %11s %9s\n", title.c_str(), "purchases", "lock waits", "handoffs");
    for (const auto& [pid, c] : sale.processes) {
        const std::string waits = sale.locked ? std::to_string(c.waits) : "-";
        const std::string handoffs = sale.locked ? std::to_string(c.handoffs) : "-";
        std::printf("  pid %-22d %9lld %11s %9s%s\n", static_cast<int>(pid), c.purchases, waits.c_str(),
                    handoffs.c_str(), c.errors ? "  (failed)" : "");
    }
}

void print_verdict(const SaleResult& a, const SaleResult& b) {
    std::printf("\nwith lock:    ");
    if (a.correct())
        std::printf("correct: %lld units, %lld orders, none oversold\n", a.sold(), a.orders);
    else
        std::printf("%s: %lld orders for %lld units, final stock %lld, %lld buyer errors\n",
                    a.stopped ? "STOPPED before the end" : "WRONG", a.orders, a.initial, a.final_stock,
                    a.totals.errors);
    std::printf("without lock: ");
    if (b.oversold() > 0)
        std::printf("%lld orders for %lld units: oversold by %lld (%.1fx the stock)\n", b.orders, b.initial,
                    b.oversold(), static_cast<double>(b.orders) / static_cast<double>(b.initial));
    else
        std::printf("no oversell this time (more buyers or less stock make the race likelier)\n");
}

}  // namespace

int main(int argc, char** argv) {
    Options options;
    CLI::App app{"Flash sale: buyers race for a limited stock, with and without holdfast's lock."};
    app.add_option("--stock,-s", options.stock, "Units on sale")->check(CLI::Range(1, 1000000));
    app.add_option("--processes,-p", options.processes, "Buyer processes (one holdfast::Client each)")
        ->check(CLI::Range(1, 64));
    app.add_option("--threads,-t", options.threads, "Buyer threads per process")->check(CLI::Range(1, 256));
    auto* url = app.add_option("--url", options.url,
                               "redis://[user:password@]host[:port][/db] or redis-cluster://host:port[,...]; "
                               "default: a private redis-server")
                    ->envname("REDIS_URL");
    app.add_flag("--cluster", options.cluster, "Run on a private local Redis Cluster of 3 masters")->excludes(url);
    app.add_option("--timeout", options.timeout_s, "Seconds a sale may take before it is stopped")
        ->check(CLI::Range(1, 3600));
    CLI11_PARSE(app, argc, argv);

    std::signal(SIGINT, on_signal);  // stop the buyers and the private server instead of orphaning them
    std::signal(SIGTERM, on_signal);
    try {
        std::optional<holdfast::support::RedisServer> server;
        std::optional<holdfast::support::RedisCluster> cluster;
        if (options.cluster) {
            cluster.emplace(3);
            options.url = cluster->url();
        } else if (options.url.empty()) {
            server.emplace();
            options.url = server->url();
        }
        const auto config = holdfast::Config::from_uri(options.url);
        auto redis = connect(config);
        std::printf("Flash sale of %s: %d units, %d processes x %d threads, Redis at %s%s\n", kStockKey.c_str(),
                    options.stock, options.processes, options.threads, config.server_name().c_str(),
                    server ? " (private redis-server)" : cluster ? " (private cluster, 3 masters)" : "");
        std::fflush(stdout);  // before the progress lines on stderr

        // Ctrl-C may kill the buyers before the parent notices: check the flag, not how the sale ended.
        const SaleResult locked = run_sale(options, config, *redis, true);
        if (g_interrupted) return 130;
        const SaleResult unlocked = run_sale(options, config, *redis, false);
        if (g_interrupted) return 130;

        print_table(locked, unlocked);
        print_processes(locked);
        print_processes(unlocked);
        print_verdict(locked, unlocked);
        return locked.correct() ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "flash_sale: %s\n", e.what());
        return 2;
    }
}
