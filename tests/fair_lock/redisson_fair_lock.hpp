// A Redisson RFairLock client, emulated: redisson_fair_lock.lua (written from
// the layout spec) run with EVAL on a raw connection, so tests can put Java
// waiters, with Redisson's deadline arithmetic, in a holdfast queue.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "sync_redis.hpp"
#include "test_file.hpp"

namespace holdfast::testing {

class RedissonFairLock {
public:
    /// `wait_timeout_ms`: the client's fairLockWaitTimeout (Redisson's default 300 s).
    RedissonFairLock(support::SyncRedis& raw, const std::string& name, long long wait_timeout_ms = 300000)
        : wait_timeout_ms_(wait_timeout_ms),
          raw_(raw),
          keys_{name, "redisson_lock_queue:{" + name + "}", "redisson_lock_timeout:{" + name + "}",
                "redisson_lock__channel:{" + name + "}"} {}

    /// RFairLock's acquire attempt: true when `owner` took the lock, false when
    /// it waits in the queue (joined now or before).
    bool try_acquire(const std::string& owner, long long lease_ms = 120000) {
        return run("acquire", owner, {std::to_string(lease_ms), std::to_string(wait_timeout_ms_)})->type ==
               REDIS_REPLY_NIL;
    }

    /// RFairLock's unlock: -1 (nil: not the owner), 0 (still held) or 1.
    long long release(const std::string& owner) {
        auto reply = run("release", owner, {"30000"});
        return reply->type == REDIS_REPLY_NIL ? -1 : reply->integer;
    }

    /// The channel RFairLock's `owner` waits on.
    std::string channel(const std::string& owner) const { return keys_[3] + ':' + owner; }

private:
    support::ReplyPtr run(const std::string& operation, const std::string& owner, std::vector<std::string> more) {
        const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
        std::vector<std::string> args{"EVAL", script(), "4"};
        args.insert(args.end(), keys_.begin(), keys_.end());
        args.insert(args.end(), {operation, owner, std::to_string(now)});
        args.insert(args.end(), more.begin(), more.end());
        auto reply = raw_.command(args);
        if (reply->type == REDIS_REPLY_ERROR)
            throw std::runtime_error("redisson_fair_lock.lua " + operation + ": " + reply->str);
        return reply;
    }

    static const std::string& script() {
        static const std::string body = test_file("fair_lock/redisson_fair_lock.lua");
        return body;
    }

    long long wait_timeout_ms_;
    support::SyncRedis& raw_;
    std::vector<std::string> keys_;
};

}  // namespace holdfast::testing
