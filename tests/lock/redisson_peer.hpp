// A Redisson peer's own lock scripts, as Redisson 3.x sends them, for the
// lock tests that share a lock with one.
#pragma once

#include <string>

// Internal linkage (const, not inline): each folder's tests have their own.
namespace holdfast::testing {

// RedissonLock.tryLockInnerAsync and unlockInnerAsync (with the unlock latch).
const std::string redisson_acquire =
    "if ((redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then "
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; "
    "return redis.call('pttl', KEYS[1]);";
const std::string redisson_release =
    "local val = redis.call('get', KEYS[3]); if val ~= false then return tonumber(val); end; "
    "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil; end; "
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); "
    "if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); redis.call('set', KEYS[3], 0, 'px', ARGV[5]); "
    "return 0; else redis.call('del', KEYS[1]); redis.call(ARGV[4], KEYS[2], ARGV[1]); "
    "redis.call('set', KEYS[3], 1, 'px', ARGV[5]); return 1; end;";

const std::string java_owner = "6c1d6f7e-5e2b-4b7a-9d55-0b8f1a2c3d4e:87";

}  // namespace holdfast::testing
