-- Test only: a Redisson client's side of RSemaphore and
-- RPermitExpirableSemaphore, written from docs/redisson-layout.md
-- ("Semaphore", "Permit-expirable semaphore"), so tests can check that
-- holdfast and a Java peer see each other's effects.
-- KEYS[1] the free count, KEYS[2] the ZSET of taken ids, KEYS[3] the channel.
-- ARGV[1] the operation, ARGV[2] now (epoch ms), then per operation:
--   try_set_permits     n, ttl ms ('0': none)        1 set, 0 a count exists
--   release_if_exists   n                            1 released, 0 no count
--   acquire             lease end, ids... (n of them) 'OK', ':<nearest end>' or nil
--   release_one         id                           1, or 0 (not held, or past its lease)
--   release_list        ids...                       the number released, 0 if any is not held
--   lease_time          id                           -1 (no lease), ms left, or nil (not held)
--   available | acquired | permits                   the count
--   set_permits         n                            nil
-- Not holdfast's scripts: what a Java client runs, checks and all.
local now = tonumber(ARGV[2])
local never = 922337203685477

-- Most permit-expirable calls first return the ended leases (limit: all when nil).
local function reclaim(limit)
    local ended
    if limit then
        ended = redis.call('zrangebyscore', KEYS[2], 0, now, 'limit', 0, limit)
    else
        ended = redis.call('zrangebyscore', KEYS[2], 0, now)
    end
    if #ended == 0 then return end
    redis.call('zrem', KEYS[2], unpack(ended))
    local count = redis.call('incrby', KEYS[1], #ended)
    if count > 0 then redis.call('publish', KEYS[3], count) end
end

local function taken()
    return redis.call('zcount', KEYS[2], 0, '+inf')
end

local op = ARGV[1]
if op == 'try_set_permits' then
    if redis.call('exists', KEYS[1]) == 1 then return 0 end
    if ARGV[4] == '0' then
        redis.call('set', KEYS[1], ARGV[3])
    else
        redis.call('set', KEYS[1], ARGV[3], 'px', ARGV[4])
    end
    redis.call('publish', KEYS[3], ARGV[3])
    return 1
elseif op == 'release_if_exists' then
    if redis.call('exists', KEYS[1]) == 0 then return 0 end
    redis.call('publish', KEYS[3], redis.call('incrby', KEYS[1], ARGV[3]))
    return 1
elseif op == 'acquire' then
    local wanted = #ARGV - 3
    reclaim(wanted)
    local free = tonumber(redis.call('get', KEYS[1]) or '0')
    if free >= wanted then
        redis.call('decrby', KEYS[1], wanted)
        for i = 4, #ARGV do redis.call('zadd', KEYS[2], ARGV[3], ARGV[i]) end
        local ttl = redis.call('pttl', KEYS[1])
        if ttl > 0 then redis.call('pexpire', KEYS[2], ttl) end
        return 'OK'
    end
    local first = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES')
    if first[2] and tonumber(first[2]) ~= never then return ':' .. first[2] end
    return nil
elseif op == 'release_one' then
    local lease_end = redis.call('zscore', KEYS[2], ARGV[3])
    if redis.call('zrem', KEYS[2], ARGV[3]) == 0 then return 0 end
    redis.call('publish', KEYS[3], redis.call('incrby', KEYS[1], 1))
    if tonumber(lease_end) <= now then return 0 end
    return 1
elseif op == 'release_list' then
    for i = 3, #ARGV do
        local lease_end = redis.call('zscore', KEYS[2], ARGV[i])
        if not lease_end or tonumber(lease_end) <= now then return 0 end
    end
    reclaim(nil)
    local removed = redis.call('zrem', KEYS[2], unpack(ARGV, 3))
    redis.call('incrby', KEYS[1], removed)
    redis.call('publish', KEYS[3], removed)
    return removed
elseif op == 'lease_time' then
    reclaim(nil)
    local lease_end = redis.call('zscore', KEYS[2], ARGV[3])
    if not lease_end then return nil end
    if tonumber(lease_end) == never then return -1 end
    return tonumber(lease_end) - now
elseif op == 'available' then
    reclaim(nil)
    return tonumber(redis.call('get', KEYS[1]) or '0')
elseif op == 'acquired' then
    reclaim(nil)
    return taken()
elseif op == 'permits' then
    reclaim(nil)
    local free = redis.call('get', KEYS[1])
    if not free then return 0 end
    return tonumber(free) + taken()
elseif op == 'set_permits' then
    local free = redis.call('get', KEYS[1])
    if not free then
        redis.call('set', KEYS[1], ARGV[3])
        redis.call('publish', KEYS[3], ARGV[3])
        return nil
    end
    local total = tonumber(free) + taken()
    if total ~= tonumber(ARGV[3]) then
        redis.call('incrby', KEYS[1], tonumber(ARGV[3]) - total)
        redis.call('publish', KEYS[3], ARGV[3])
    end
    return nil
end
return redis.error_reply('redisson_semaphore.lua: unknown operation ' .. tostring(op))
