// A Redisson RSemaphore / RPermitExpirableSemaphore client, emulated:
// redisson_semaphore.lua (written from docs/redisson-layout.md) run with EVAL
// on a raw connection, so tests can check that holdfast and a Java peer see
// each other's permits, counts and leases.
#pragma once

#include <chrono>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "sync_redis.hpp"
#include "test_file.hpp"

namespace holdfast::testing {

class RedissonSemaphore {
public:
    RedissonSemaphore(support::SyncRedis& raw, const std::string& name)
        : raw_(raw), keys_{name, "{" + name + "}:timeout", "redisson_sc:{" + name + "}"} {}

    static long long now_ms() {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
    }

    // RSemaphore
    bool try_set_permits(long long permits, long long ttl_ms = 0) {
        return run("try_set_permits", {std::to_string(permits), std::to_string(ttl_ms)})->integer == 1;
    }
    bool release_if_exists(long long permits) {
        return run("release_if_exists", {std::to_string(permits)})->integer == 1;
    }

    // RPermitExpirableSemaphore: tryAcquire(permits, 0, lease); the ids as
    // Redisson shows them (hex), empty when none were taken. No lease: never.
    std::vector<std::string> try_acquire(int permits, std::optional<long long> lease_ms = std::nullopt) {
        const long long end = lease_ms ? now_ms() + *lease_ms : 922337203685477;
        std::vector<std::string> args{std::to_string(end)}, hex;
        for (int i = 0; i < permits; ++i) {
            hex.push_back(new_id());
            args.push_back(bytes_of(hex.back()));
        }
        const auto reply = run("acquire", args);
        if (reply->type == REDIS_REPLY_STATUS || (reply->type == REDIS_REPLY_STRING && std::string(reply->str) == "OK"))
            return hex;
        return {};
    }
    /// tryRelease(id): true only when released within its lease.
    bool try_release(const std::string& id) { return run("release_one", {bytes_of(id)})->integer == 1; }
    /// tryRelease(ids): the number released (0: none, some id not held).
    long long try_release(const std::vector<std::string>& ids) {
        std::vector<std::string> args;
        for (const auto& id : ids) args.push_back(bytes_of(id));
        return run("release_list", args)->integer;
    }
    /// getLeaseTime(id): -1 for no lease, else ms left; nullopt where Redisson throws (not held).
    std::optional<long long> lease_time(const std::string& id) {
        const auto reply = run("lease_time", {bytes_of(id)});
        if (reply->type == REDIS_REPLY_NIL) return std::nullopt;
        return reply->integer;
    }
    long long available_permits() { return run("available", {})->integer; }
    long long acquired_permits() { return run("acquired", {})->integer; }
    long long permits() { return run("permits", {})->integer; }
    void set_permits(long long permits) { run("set_permits", {std::to_string(permits)}); }

    /// A permit id's 16 bytes, from its 32 hex digits.
    static std::string bytes_of(const std::string& hex) {
        std::string bytes;
        for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
            bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
        return bytes;
    }

private:
    static std::string new_id() {
        static std::mt19937_64 random{std::random_device{}()};
        constexpr char digits[] = "0123456789abcdef";
        std::string hex;
        for (int i = 0; i < 32; ++i) hex += digits[random() % 16];
        return hex;
    }

    support::ReplyPtr run(const std::string& operation, const std::vector<std::string>& more) {
        std::vector<std::string> args{"EVAL", script(), "3"};
        args.insert(args.end(), keys_.begin(), keys_.end());
        args.insert(args.end(), {operation, std::to_string(now_ms())});
        args.insert(args.end(), more.begin(), more.end());
        auto reply = raw_.command(args);
        if (reply->type == REDIS_REPLY_ERROR)
            throw std::runtime_error("redisson_semaphore.lua " + operation + ": " + reply->str);
        return reply;
    }

    static const std::string& script() {
        static const std::string body = test_file("semaphore/redisson_semaphore.lua");
        return body;
    }

    support::SyncRedis& raw_;
    std::vector<std::string> keys_;
};

}  // namespace holdfast::testing
