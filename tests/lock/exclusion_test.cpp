// Mutual exclusion: threads of one client and separate processes, each with
// a read-modify-write that loses updates the moment two get in together.
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using Exclusion = RedisTest;

// One critical section: INCR an "inside" gauge (must read 1), a GET/SET of the
// counter, then DECR. Returns false if someone else was inside.
bool critical_section(support::SyncRedis& redis) {
    const bool alone = redis.integer({"INCR", "inside"}) == 1;
    const long long value = redis.integer({"GET", "counter"});
    redis.command({"SET", "counter", std::to_string(value + 1)});
    redis.integer({"DECR", "inside"});
    return alone;
}

TEST_F(Exclusion, ThreadsOfOneClient) {
    Client client(config());
    Lock lock(client, "counter-lock");
    constexpr int threads = 8, rounds = 40;
    std::atomic<int> overlaps{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([&] {
            support::SyncRedis redis(server->port());
            for (int i = 0; i < rounds; ++i) {
                std::lock_guard guard(lock);
                if (!critical_section(redis)) ++overlaps;
            }
        });
    for (auto& w : workers) w.join();
    EXPECT_EQ(overlaps, 0);
    EXPECT_EQ(raw->integer({"GET", "counter"}), threads * rounds);
    EXPECT_EQ(raw->integer({"EXISTS", "counter-lock"}), 0);
}

TEST_F(Exclusion, SeparateProcesses) {
    constexpr int processes = 4, threads = 3, rounds = 25;
    const auto port = server->port();
    std::vector<pid_t> children;
    for (int p = 0; p < processes; ++p) {
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            // A fresh client in the child: nothing of the parent's is used.
            int failures = 0;
            try {
                Config c;
                c.port = port;
                Client client(c);
                Lock lock(client, "counter-lock");
                std::vector<std::thread> workers;
                std::atomic<int> overlaps{0};
                for (int t = 0; t < threads; ++t)
                    workers.emplace_back([&] {
                        support::SyncRedis redis(port);
                        for (int i = 0; i < rounds; ++i) {
                            std::lock_guard guard(lock);
                            if (!critical_section(redis)) ++overlaps;
                        }
                    });
                for (auto& w : workers) w.join();
                failures = overlaps;
            } catch (...) {
                failures = 100;
            }
            ::_exit(failures == 0 ? 0 : 1);
        }
        children.push_back(pid);
    }
    for (pid_t pid : children) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << pid << " saw an overlap or failed";
    }
    EXPECT_EQ(raw->integer({"GET", "counter"}), processes * threads * rounds);
    EXPECT_EQ(raw->integer({"EXISTS", "counter-lock"}), 0);
}

}  // namespace
}  // namespace holdfast::testing
