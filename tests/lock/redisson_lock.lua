-- Test only: a Redisson client's side of a reentrant lock (RLock), and of a
-- non-reentrant one (RedissonNonReentrantLock), written from
-- docs/redisson-layout.md ("Reentrant lock", "Non-reentrant lock") so tests
-- can share a lock with a Java holder. Not Redisson's code: its contract.
-- KEYS[1] lock hash, KEYS[2] channel, KEYS[3] the unlock's latch key.
-- ARGV[1] operation, ARGV[2] owner, ARGV[3] lease ms, then per operation:
--   lock, lock_once: nil when taken, else the holder's PTTL; lock_once
--     answers its owner's second acquire with the error NON_REENTRANT_REACQUIRE
--   unlock  ARGV[4] publish command, ARGV[5] latch ms: nil (not the
--     owner), 0 (still held) or 1 (released and announced with `0`)
local operation, owner, lease = ARGV[1], ARGV[2], ARGV[3]

local function hold()
    redis.call('hincrby', KEYS[1], owner, 1)
    redis.call('pexpire', KEYS[1], lease)
    return nil
end

if operation == 'lock' or operation == 'lock_once' then
    if redis.call('exists', KEYS[1]) == 0 then
        return hold()
    end
    if redis.call('hexists', KEYS[1], owner) == 0 then
        return redis.call('pttl', KEYS[1])
    end
    if operation == 'lock_once' then
        return redis.error_reply('NON_REENTRANT_REACQUIRE')
    end
    return hold()
end

if operation == 'unlock' then
    -- A retried unlock answers what the first one did.
    local answered = redis.call('get', KEYS[3])
    if answered ~= false then
        return tonumber(answered)
    end
    if redis.call('hexists', KEYS[1], owner) == 0 then
        return nil
    end
    local answer = 1
    if redis.call('hincrby', KEYS[1], owner, -1) > 0 then
        redis.call('pexpire', KEYS[1], lease)
        answer = 0
    else
        redis.call('del', KEYS[1])
        redis.call(ARGV[4], KEYS[2], '0')
    end
    redis.call('set', KEYS[3], answer, 'px', ARGV[5])
    return answer
end

return redis.error_reply('ERR redisson_lock.lua: no operation ' .. operation)
