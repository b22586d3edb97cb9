-- Test only: a Redisson client's side of a read-write lock (RReadWriteLock's
-- read and write sides), written from docs/redisson-layout.md ("Read-write
-- lock") so tests can share a lock with Java readers and writers. Not
-- Redisson's code: its contract.
-- KEYS[1] lock hash, KEYS[2] channel, KEYS[3] the unlock's latch key.
-- ARGV[1] operation, ARGV[2] owner, ARGV[3] lease ms, ARGV[4] publish
-- command, ARGV[5] latch ms. Replies:
--   read_lock, write_lock: nil when taken, else the lock's PTTL
--   read_unlock, write_unlock: nil (held no such hold), 0 (the lock still
--     held) or 1 (released: the read side announces `0`, the write side `1`)
local operation, owner, lease = ARGV[1], ARGV[2], tonumber(ARGV[3])
local name = KEYS[1]
local writer = owner .. ':write'
-- The braced name every read hold's key starts with, as Redisson's suffix does.
local tag = string.find(name, '{', 1, true) and name or '{' .. name .. '}'
local function hold_key(field, n)
    return tag .. ':' .. field .. ':rwlock_timeout:' .. n
end

local function answered(answer)
    if answer ~= nil then
        redis.call('set', KEYS[3], answer, 'px', ARGV[5])
    end
    return answer
end

if operation == 'unlock' or operation == 'read_unlock' or operation == 'write_unlock' then
    local before = redis.call('get', KEYS[3])
    if before ~= false then
        return tonumber(before)
    end
end

local mode = redis.call('hget', name, 'mode')

if operation == 'read_lock' then
    if mode == false then
        redis.call('hset', name, 'mode', 'read', owner, 1)
        redis.call('set', hold_key(owner, 1), 1, 'px', lease)
        redis.call('pexpire', name, lease)
        return nil
    end
    if mode == 'read' or redis.call('hexists', name, writer) == 1 then
        local n = redis.call('hincrby', name, owner, 1)
        redis.call('set', hold_key(owner, n), 1, 'px', lease)
        redis.call('pexpire', name, math.max(redis.call('pttl', name), lease))
        return nil
    end
    return redis.call('pttl', name)
end

if operation == 'read_unlock' then
    if mode == false then
        redis.call(ARGV[4], KEYS[2], '0')
        redis.call('set', KEYS[3], 1, 'px', ARGV[5])
        return nil
    end
    local held = tonumber(redis.call('hget', name, owner))
    if held == nil then
        return nil
    end
    if held == 1 then
        redis.call('hdel', name, owner)
    else
        redis.call('hincrby', name, owner, -1)
    end
    redis.call('del', hold_key(owner, held))
    if redis.call('hlen', name) > 1 then
        -- The longest lease left among every reader's hold keys.
        local longest = -3
        local all = redis.call('hgetall', name)
        for i = 1, #all, 2 do
            local count = tonumber(all[i + 1])
            if count then
                for n = 1, count do
                    longest = math.max(longest, redis.call('pttl', hold_key(all[i], n)))
                end
            end
        end
        if longest > 0 then
            redis.call('pexpire', name, longest)
            return answered(0)
        end
        if mode == 'write' then
            return answered(0)
        end
    end
    redis.call('del', name)
    redis.call(ARGV[4], KEYS[2], '0')
    return answered(1)
end

if operation == 'write_lock' then
    if mode == false then
        redis.call('hset', name, 'mode', 'write', writer, 1)
        redis.call('pexpire', name, lease)
        return nil
    end
    if mode == 'write' and redis.call('hexists', name, writer) == 1 then
        redis.call('hincrby', name, writer, 1)
        redis.call('pexpire', name, redis.call('pttl', name) + lease)
        return nil
    end
    return redis.call('pttl', name)
end

if operation == 'write_unlock' then
    if mode == false then
        redis.call(ARGV[4], KEYS[2], '1')
        redis.call('set', KEYS[3], 1, 'px', ARGV[5])
        return nil
    end
    if mode ~= 'write' or redis.call('hexists', name, writer) == 0 then
        return nil
    end
    if redis.call('hincrby', name, writer, -1) > 0 then
        redis.call('pexpire', name, lease)
        return answered(0)
    end
    redis.call('hdel', name, writer)
    if redis.call('hlen', name) == 1 then
        redis.call('del', name)
        redis.call(ARGV[4], KEYS[2], '1')
    else
        -- The writer's own read holds are left: a read lock now.
        redis.call('hset', name, 'mode', 'read')
    end
    return answered(1)
end

return redis.error_reply('ERR redisson_rwlock.lua: no operation ' .. operation)
