-- Read lock release (Redisson RReadWriteLock layout, read side).
-- KEYS[1] lock hash, KEYS[2] channel; ARGV[1] unlock message ('0': one waiter
-- may try), ARGV[2] owner id, ARGV[3] publish command (publish or spublish).
-- Drops the owner's newest read hold and its key <tag>:<owner>:rwlock_timeout:<n>.
-- The last holder out deletes the hash and publishes.
-- Reply nil: the owner holds no read lock; 0: it still holds reads; 1: its
-- last read hold is released (whether or not others still hold the lock).
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false or redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
    return nil
end
local tag = string.find(KEYS[1], '{', 1, true) and KEYS[1] or ('{' .. KEYS[1] .. '}')
local left = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if left == 0 then
    redis.call('hdel', KEYS[1], ARGV[2])
end
redis.call('del', tag .. ':' .. ARGV[2] .. ':rwlock_timeout:' .. (left + 1))
local reply = (left == 0) and 1 or 0
-- A downgrading writer still holds the write lock, whose lease is the hash's TTL.
if mode == 'write' then
    return reply
end
-- Other readers: the hash lives as long as their longest remaining hold.
-- Readers whose hold keys all expired (dead holders) do not count.
if redis.call('hlen', KEYS[1]) > 1 then
    local longest = -2
    for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
        local holds = tonumber(redis.call('hget', KEYS[1], field))
        if holds ~= nil then
            for n = 1, holds do
                longest = math.max(longest, redis.call('pttl', tag .. ':' .. field .. ':rwlock_timeout:' .. n))
            end
        end
    end
    if longest > 0 then
        redis.call('pexpire', KEYS[1], longest)
        return reply
    end
end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], ARGV[1])
return 1
