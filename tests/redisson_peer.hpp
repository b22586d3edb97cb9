// Redisson clients, emulated, for the tests that share a primitive with one.
// Each peer is a Lua file under tests/ written from docs/redisson-layout.md
// in this project's words (never Redisson's own scripts: its contract), run
// with EVAL on a raw connection with the keys and arguments a Java client
// would send, the caller's clock included.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sync_redis.hpp"

namespace holdfast::testing {

/// A Java client's owner id for one of its threads (`<client uuid>:<thread id>`).
inline const std::string java_owner = "6c1d6f7e-5e2b-4b7a-9d55-0b8f1a2c3d4e:87";

/// The text of the peer script tests/<path>, read once.
inline const std::string& peer_script(const std::string& path) {
    static std::mutex mutex;
    static std::map<std::string, std::string> read;
    std::lock_guard guard(mutex);
    auto [at, fresh] = read.try_emplace(path);
    if (fresh) {
        const auto file = std::filesystem::path(HOLDFAST_TESTS_DIR) / path;
        std::ifstream in(file);
        if (!in) throw std::runtime_error("cannot read " + file.string());
        std::ostringstream text;
        text << in.rdbuf();
        at->second = text.str();
    }
    return at->second;
}

/// EVAL of the peer script tests/<path>: its reply as it comes, error replies included.
inline support::ReplyPtr run_peer(support::SyncRedis& raw, const std::string& path,
                                  const std::vector<std::string>& keys, const std::vector<std::string>& args) {
    std::vector<std::string> command{"EVAL", peer_script(path), std::to_string(keys.size())};
    command.insert(command.end(), keys.begin(), keys.end());
    command.insert(command.end(), args.begin(), args.end());
    return raw.command(command);
}

/// The caller's clock in epoch ms, as a Java client sends it.
inline std::string java_now() {
    using namespace std::chrono;
    return std::to_string(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

/// The braced form Redisson gives a name in its side keys and channels.
inline std::string java_tagged(const std::string& prefix, const std::string& name) {
    return prefix + ':' + (name.find('{') == std::string::npos ? '{' + name + '}' : name);
}

/// Redisson's unlock latch key for the n-th unlock of `name`.
inline std::string java_latch(const std::string& name, int n) {
    std::string id = std::to_string(n);
    return java_tagged("redisson_unlock_latch", name) + ':' + std::string(32 - id.size(), '0') + id;
}

/// On a thread of its own, the holdfast side of a shared lock:
/// `lock.try_lock_for(wait)`, given back at once if taken; whether it was.
template <class Lockable>
std::future<bool> take_and_give_back(Lockable& lock, std::chrono::milliseconds wait = std::chrono::seconds(20)) {
    return std::async(std::launch::async, [&lock, wait] {
        const bool taken = lock.try_lock_for(wait);
        if (taken) lock.unlock();
        return taken;
    });
}

/// A Redisson RLock or RedissonNonReentrantLock client on lock `name`
/// (tests/lock/redisson_lock.lua).
class RedissonLockPeer {
public:
    RedissonLockPeer(support::SyncRedis& raw, std::string name)
        : raw_(raw), name_(std::move(name)), channel_(java_tagged("redisson_lock__channel", name_)) {}

    /// RLock's acquire: nil when taken, else the holder's PTTL.
    support::ReplyPtr lock(const std::string& owner = java_owner, const std::string& lease_ms = "30000") {
        return run("lock", owner, lease_ms);
    }
    /// RedissonNonReentrantLock's: the same, but its holder's second acquire
    /// is the error NON_REENTRANT_REACQUIRE.
    support::ReplyPtr lock_once(const std::string& owner = java_owner, const std::string& lease_ms = "30000") {
        return run("lock_once", owner, lease_ms);
    }
    /// The unlock of both (each call its own latch): nil, 0 or 1.
    support::ReplyPtr unlock(const std::string& owner = java_owner) {
        return run_peer(raw_, "lock/redisson_lock.lua", {name_, channel_, java_latch(name_, ++unlocks_)},
                        {"unlock", owner, "30000", "publish", "13000"});
    }
    const std::string& channel() const { return channel_; }

private:
    support::ReplyPtr run(const std::string& operation, const std::string& owner, const std::string& lease_ms) {
        return run_peer(raw_, "lock/redisson_lock.lua", {name_, channel_, ""}, {operation, owner, lease_ms});
    }

    support::SyncRedis& raw_;
    std::string name_, channel_;
    int unlocks_ = 0;
};

/// A Redisson RReadWriteLock client on lock `name`, both sides
/// (tests/rwlock/redisson_rwlock.lua).
class RedissonReadWriteLockPeer {
public:
    RedissonReadWriteLockPeer(support::SyncRedis& raw, std::string name)
        : raw_(raw), name_(std::move(name)), channel_(java_tagged("redisson_rwlock", name_)) {}

    /// nil when taken, else the lock's PTTL.
    support::ReplyPtr read_lock(const std::string& lease_ms = "30000") { return run("read_lock", lease_ms); }
    support::ReplyPtr write_lock() { return run("write_lock", "30000"); }
    /// nil (no such hold), 0 (still held) or 1 (released).
    support::ReplyPtr read_unlock() { return run("read_unlock", "30000"); }
    support::ReplyPtr write_unlock() { return run("write_unlock", "30000"); }

private:
    support::ReplyPtr run(const std::string& operation, const std::string& lease_ms) {
        return run_peer(raw_, "rwlock/redisson_rwlock.lua", {name_, channel_, java_latch(name_, ++calls_)},
                        {operation, java_owner, lease_ms, "publish", "13000"});
    }

    support::SyncRedis& raw_;
    std::string name_, channel_;
    int calls_ = 0;
};

/// A Redisson client's getMultiLock(group, values) on `group`, for the
/// values whose fields are `fields` (tests/multi_value_lock/redisson_group_lock.lua).
class RedissonGroupLockPeer {
public:
    RedissonGroupLockPeer(support::SyncRedis& raw, std::string group, std::vector<std::string> fields)
        : raw_(raw), group_(std::move(group)), channel_(java_tagged("redisson_lock__channel", group_)),
          fields_(std::move(fields)) {}

    /// The waiting form's attempt: nil when taken, else ms to wait.
    support::ReplyPtr lock(const std::string& owner = java_owner, const std::string& lease_ms = "30000") {
        return run("lock", owner, lease_ms);
    }
    /// tryLock(): 1 taken, 0 not.
    support::ReplyPtr try_lock(const std::string& owner = java_owner) { return run("try_lock", owner, "30000"); }
    /// nil, 0 or 1 (every value freed).
    support::ReplyPtr unlock(const std::string& owner = java_owner) { return run("unlock", owner, "30000"); }
    support::ReplyPtr renew(const std::string& owner = java_owner) { return run("renew", owner, "30000"); }
    support::ReplyPtr force_unlock() { return run("force_unlock", java_owner, "30000"); }
    bool is_locked() { return run("is_locked", java_owner, "0")->integer == 1; }
    bool is_held(const std::string& owner = java_owner) { return run("is_held", owner, "0")->integer == 1; }
    const std::string& channel() const { return channel_; }

private:
    support::ReplyPtr run(const std::string& operation, const std::string& owner, const std::string& lease_ms) {
        std::vector<std::string> args{operation, owner, lease_ms, java_now(), "publish", "13000"};
        args.insert(args.end(), fields_.begin(), fields_.end());
        return run_peer(raw_, "multi_value_lock/redisson_group_lock.lua",
                        {group_, channel_, java_latch(group_, ++calls_)}, args);
    }

    support::SyncRedis& raw_;
    std::string group_, channel_;
    std::vector<std::string> fields_;
    int calls_ = 0;
};

}  // namespace holdfast::testing
