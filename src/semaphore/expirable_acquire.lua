-- Permit-expirable semaphore: reclaim ended leases, then take a permit
-- (Redisson RPermitExpirableSemaphore layout).
-- KEYS[1] free permits, KEYS[2] ZSET of held permit ids (16 bytes) scored by
-- the end of their lease (epoch ms).
-- ARGV[1] now (epoch ms), ARGV[2] publish command, ARGV[3] channel (no key,
-- as in lock/release.lua), ARGV[4] the score that means "never ends"; to take
-- a permit also ARGV[5] its lease's end and ARGV[6] its id.
-- Permits whose lease has ended go back to the count first (their holder is
-- gone, or late), and the new count is published: it may let waiters in.
-- Reply without ARGV[6]: the free permits. With it: nil when taken; else the
-- ms until the nearest lease ends, or -1 when none will; a NOPERM error,
-- nothing taken, when the user could not give the permit back.
-- include: ../primitive/release_rights.lua.part
local refused = checks_rights and refused_right({{ARGV[2], ARGV[3], '1'}}, 'releasing a permit')
if refused then
    return refused
end
local free = redis.call('get', KEYS[1])
if free and not string.match(free, '^-?%d+$') then
    return redis.error_reply('WRONGTYPE the key holds a string that is not a count')
end
local ended = redis.call('zrangebyscore', KEYS[2], 0, ARGV[1])
if #ended > 0 then
    -- Publish before any write: a refused PUBLISH (ACL) changes nothing.
    free = tonumber(free or 0) + #ended
    if free > 0 then
        redis.call(ARGV[2], ARGV[3], free)
    end
    for i = 1, #ended, 1000 do
        redis.call('zrem', KEYS[2], unpack(ended, i, math.min(i + 999, #ended)))
    end
    redis.call('incrby', KEYS[1], #ended)
end
free = tonumber(free or 0)
if not ARGV[6] then
    return free
end
if free >= 1 then
    redis.call('decr', KEYS[1])
    redis.call('zadd', KEYS[2], ARGV[5], ARGV[6])
    local ttl = redis.call('pttl', KEYS[1])
    if ttl > 0 then
        redis.call('pexpire', KEYS[2], ttl)
    end
    return nil
end
local nearest = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES')
if nearest[2] and tonumber(nearest[2]) < tonumber(ARGV[4]) then
    return math.max(0, tonumber(nearest[2]) - tonumber(ARGV[1]))
end
return -1
