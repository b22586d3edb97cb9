-- Permit-expirable semaphore: reclaim ended leases, then take a permit
-- (Redisson RPermitExpirableSemaphore layout).
-- KEYS[1] free permits, KEYS[2] ZSET of held permit ids (16 bytes) scored by
-- the end of their lease (epoch ms), KEYS[3] channel.
-- ARGV[1] now (epoch ms), ARGV[2] publish command, ARGV[3] the score that
-- means "never ends"; to take a permit also ARGV[4] its lease's end and
-- ARGV[5] its id.
-- Permits whose lease has ended go back to the count first (their holder is
-- gone, or late), and the new count is published: it may let waiters in.
-- Reply without ARGV[5]: the free permits. With it: nil when taken; else the
-- ms until the nearest lease ends, or -1 when none will.
local free = redis.call('get', KEYS[1])
if free and not string.match(free, '^-?%d+$') then
    return redis.error_reply('WRONGTYPE the key holds a string that is not a count')
end
local ended = redis.call('zrangebyscore', KEYS[2], 0, ARGV[1])
if #ended > 0 then
    -- Publish before any write: a refused PUBLISH (ACL) changes nothing.
    free = tonumber(free or 0) + #ended
    if free > 0 then
        redis.call(ARGV[2], KEYS[3], free)
    end
    for i = 1, #ended, 1000 do
        redis.call('zrem', KEYS[2], unpack(ended, i, math.min(i + 999, #ended)))
    end
    redis.call('incrby', KEYS[1], #ended)
end
free = tonumber(free or 0)
if not ARGV[5] then
    return free
end
if free >= 1 then
    redis.call('decr', KEYS[1])
    redis.call('zadd', KEYS[2], ARGV[4], ARGV[5])
    local ttl = redis.call('pttl', KEYS[1])
    if ttl > 0 then
        redis.call('pexpire', KEYS[2], ttl)
    end
    return nil
end
local nearest = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES')
if nearest[2] and tonumber(nearest[2]) < tonumber(ARGV[3]) then
    return math.max(0, tonumber(nearest[2]) - tonumber(ARGV[1]))
end
return -1
