-- Test only: a Redisson RFairLock client's side of the queue, written from
-- docs/redisson-layout.md ("Fair lock"), so tests can put Java waiters
-- in a holdfast queue. KEYS[1] lock hash, KEYS[2] queue, KEYS[3] deadlines,
-- KEYS[4] channel prefix. ARGV[1] the operation, ARGV[2] owner, ARGV[3] now
-- (epoch ms), then per operation:
--   acquire  ARGV[4] lease ms, ARGV[5] wait budget ms: nil when taken, else ms to wait;
--            with ARGV[6] 'once', RedissonNonReentrantFairLock's: its holder's second
--            acquire is the error NON_REENTRANT_REACQUIRE ("Non-reentrant fair lock")
--   release  ARGV[4] lease ms to reset a still-held lock to: nil, 0 or 1
--   give_up  ARGV[4] wait budget ms
local owner, now = ARGV[2], tonumber(ARGV[3])

-- Every operation but giving up first drops the heads whose deadline passed.
local function drop_expired_heads()
    while true do
        local head = redis.call('lindex', KEYS[2], 0)
        if head == false then return end
        local deadline = redis.call('zscore', KEYS[3], head)
        if deadline == false or tonumber(deadline) > now then return end
        redis.call('zrem', KEYS[3], head)
        redis.call('lpop', KEYS[2])
    end
end

local function wake_head()
    local head = redis.call('lindex', KEYS[2], 0)
    if head ~= false then redis.call('publish', KEYS[4] .. ':' .. head, '0') end
end

if ARGV[1] == 'acquire' then
    local budget = tonumber(ARGV[5])
    drop_expired_heads()
    if redis.call('exists', KEYS[1]) == 0 and
        (redis.call('exists', KEYS[2]) == 0 or redis.call('lindex', KEYS[2], 0) == owner) then
        redis.call('lpop', KEYS[2])
        redis.call('zrem', KEYS[3], owner)
        for _, waiter in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do
            redis.call('zincrby', KEYS[3], -budget, waiter)
        end
        redis.call('hset', KEYS[1], owner, 1)
        redis.call('pexpire', KEYS[1], ARGV[4])
        return nil
    end
    if redis.call('hexists', KEYS[1], owner) == 1 then
        if ARGV[6] == 'once' then
            return redis.error_reply('NON_REENTRANT_REACQUIRE')
        end
        redis.call('hincrby', KEYS[1], owner, 1)
        redis.call('pexpire', KEYS[1], ARGV[4])
        return nil
    end
    if redis.call('zscore', KEYS[3], owner) ~= false then
        return math.max(0, redis.call('pttl', KEYS[1]))
    end
    -- Chained: the last waiter's deadline (or the lock's TTL) plus the budget.
    local last = redis.call('lindex', KEYS[2], -1)
    local ttl
    if last ~= false and last ~= owner and redis.call('zscore', KEYS[3], last) ~= false then
        ttl = tonumber(redis.call('zscore', KEYS[3], last)) - now
    else
        ttl = redis.call('pttl', KEYS[1])
    end
    if redis.call('zadd', KEYS[3], ttl + budget + now, owner) == 1 then
        redis.call('rpush', KEYS[2], owner)
    end
    return ttl
elseif ARGV[1] == 'release' then
    drop_expired_heads()
    if redis.call('exists', KEYS[1]) == 0 then
        wake_head()
        return 1
    end
    if redis.call('hexists', KEYS[1], owner) == 0 then return nil end
    if redis.call('hincrby', KEYS[1], owner, -1) > 0 then
        redis.call('pexpire', KEYS[1], ARGV[4])
        return 0
    end
    redis.call('del', KEYS[1])
    wake_head()
    return 1
elseif ARGV[1] == 'give_up' then
    local queue = redis.call('lrange', KEYS[2], 0, -1)
    local behind = false
    for _, waiter in ipairs(queue) do
        if behind then redis.call('zincrby', KEYS[3], -tonumber(ARGV[4]), waiter) end
        if waiter == owner then behind = true end
    end
    redis.call('zrem', KEYS[3], owner)
    redis.call('lrem', KEYS[2], 0, owner)
    return nil
end
return redis.error_reply('redisson_fair_lock.lua: unknown operation ' .. tostring(ARGV[1]))
