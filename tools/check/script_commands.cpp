#include "script_commands.hpp"

namespace holdfast::check {
namespace {

// Lock, FencedLock and the read-write lock's writer are renewed by lock/renew.lua.
const ScriptCommands rlock{
    {"lock/acquire.lua", "lock/release.lua", "lock/renew.lua", "lock/leave.lua"},
    {"del", "exists", "get", "hexists", "hget", "hincrby", "pexpire", "pttl", "publish", "set", "time", "zadd",
     "zrange", "zrem"}};

const ScriptCommands fenced{
    {"fenced_lock/acquire.lua", "lock/release.lua", "lock/renew.lua", "lock/leave.lua"},
    {"del", "exists", "get", "hexists", "hget", "hincrby", "incr", "pexpire", "pttl", "publish", "set", "time",
     "zrange", "zrem"}};

const ScriptCommands fair{
    {"fair_lock/acquire.lua", "fair_lock/give_up.lua", "fair_lock/release.lua", "lock/renew.lua"},
    {"del", "exists", "hdel", "hexists", "hget", "hincrby", "hset", "lindex", "lpop", "lrange", "lrem", "pexpire",
     "pttl", "publish", "rpush", "time", "zadd", "zincrby", "zrange", "zrem", "zscore"}};

const ScriptCommands rwlock{
    {"rwlock/read_acquire.lua", "rwlock/read_release.lua", "rwlock/read_renew.lua", "rwlock/write_acquire.lua",
     "rwlock/write_release.lua", "lock/renew.lua"},
    {"del", "exists", "hdel", "hexists", "hget", "hincrby", "hkeys", "hlen", "hset", "pexpire", "pttl", "publish",
     "set"}};

const ScriptCommands semaphore{
    {"semaphore/acquire.lua", "semaphore/release.lua", "semaphore/try_set_permits.lua"},
    {"decrby", "get", "incrby", "publish", "set"}};

const ScriptCommands expirable{
    {"semaphore/expirable_acquire.lua", "semaphore/expirable_release.lua", "semaphore/try_set_permits.lua"},
    {"decrby", "get", "incrby", "pexpire", "pttl", "publish", "set", "zadd", "zcard", "zrange", "zrangebyscore",
     "zrem", "zscore"}};

// The non-reentrant acquires run their reentrant twins' commands (and refuse a second hold with an error).
const ScriptCommands nonreentrant{
    {"non_reentrant_lock/acquire.lua", "lock/release.lua", "lock/renew.lua", "lock/leave.lua"}, rlock.commands};

const ScriptCommands nonreentrant_fair{
    {"non_reentrant_lock/fair_acquire.lua", "fair_lock/give_up.lua", "fair_lock/release.lua", "lock/renew.lua"},
    fair.commands};

// The group lock's hold count (the workers' probe after a release) is a script too: query.lua.
const ScriptCommands group{
    {"multi_value_lock/acquire.lua", "multi_value_lock/release.lua", "multi_value_lock/renew.lua",
     "multi_value_lock/query.lua"},
    {"hdel", "hget", "hincrby", "hset", "pexpire", "pttl", "publish", "time"}};

}  // namespace

const ScriptCommands& script_commands(Primitive primitive) {
    switch (primitive) {
        case Primitive::fenced: return fenced;
        case Primitive::fair: return fair;
        case Primitive::rwlock: return rwlock;
        case Primitive::semaphore: return semaphore;
        case Primitive::expirable: return expirable;
        case Primitive::nonreentrant: return nonreentrant;
        case Primitive::nonreentrant_fair: return nonreentrant_fair;
        case Primitive::group: return group;
        case Primitive::rlock: break;
    }
    return rlock;
}

}  // namespace holdfast::check
