-- Test only: a Redisson client's side of a group lock
-- (RedissonFasterMultiLock, getMultiLock(group, values)), written from
-- docs/redisson-layout.md ("Group lock") so tests can share a group with a
-- Java holder. Not Redisson's code: its contract, with the caller's clock.
-- KEYS[1] the group's hash, KEYS[2] channel, KEYS[3] the unlock's latch key.
-- ARGV[1] operation, ARGV[2] owner, ARGV[3] lease ms, ARGV[4] now (epoch ms),
-- ARGV[5] publish command, ARGV[6] latch ms, ARGV[7...] the set's fields.
--   lock: nil when taken, else ms until the last other holder's expire time
--   try_lock: 1 taken, 0 not
--   unlock: nil (a value not the owner's), 0 (still held) or 1 (all freed)
--   renew: 1 renewed, 0 not (the renewal ends)
--   force_unlock: how many values were held
--   is_locked, is_held: 1 or 0
local operation, owner, lease, now = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local group = KEYS[1]
local fields = {}
for i = 7, #ARGV do
    fields[#fields + 1] = ARGV[i]
end
local function expire_field(field, holder)
    return field .. ':' .. holder .. ':expire_time'
end
local function count_field(field, holder)
    return field .. ':' .. holder .. ':lock_count'
end

-- The latest expire time among the other owners holding a value, or nil.
local function blocked_until()
    local latest = nil
    for _, field in ipairs(fields) do
        local holder = redis.call('hget', group, field)
        if holder ~= false and holder ~= owner then
            local expires = tonumber(redis.call('hget', group, expire_field(field, holder)))
            if expires ~= nil and expires > now then
                latest = math.max(latest or expires, expires)
            end
        end
    end
    return latest
end

local function take()
    local fresh = redis.call('exists', group) == 0
    for _, field in ipairs(fields) do
        redis.call('hset', group, field, owner)
        local expires = tonumber(redis.call('hget', group, expire_field(field, owner)))
        if expires == nil or expires < now + lease then
            redis.call('hset', group, expire_field(field, owner), now + lease)
        end
        redis.call('hincrby', group, count_field(field, owner), 1)
    end
    local ttl = redis.call('pttl', group)
    if fresh or (ttl > 0 and ttl < lease) then
        redis.call('pexpire', group, lease)
    end
end

if operation == 'lock' or operation == 'try_lock' then
    local latest = blocked_until()
    if operation == 'try_lock' then
        if latest ~= nil then
            return 0
        end
        take()
        return 1
    end
    if latest ~= nil then
        return latest - now
    end
    take()
    return nil
end

if operation == 'unlock' then
    local before = redis.call('get', KEYS[3])
    if before ~= false then
        return tonumber(before)
    end
    if redis.call('exists', group) == 0 then
        redis.call(ARGV[5], KEYS[2], '0')
        return nil
    end
    local all_gone = 1
    for _, field in ipairs(fields) do
        local expires = tonumber(redis.call('hget', group, expire_field(field, owner)))
        if expires == nil or expires < now then
            return nil
        end
        if redis.call('hincrby', group, count_field(field, owner), -1) <= 0 then
            redis.call('hdel', group, field, expire_field(field, owner), count_field(field, owner))
        else
            if expires < now + lease then
                redis.call('hset', group, expire_field(field, owner), now + lease)
            end
            all_gone = 0
        end
    end
    redis.call(ARGV[5], KEYS[2], '0')
    redis.call('set', KEYS[3], all_gone, 'px', ARGV[6])
    if all_gone == 0 and redis.call('pttl', group) < lease then
        redis.call('pexpire', group, lease)
    end
    return all_gone
end

if operation == 'renew' then
    if redis.call('exists', group) == 0 then
        return 0
    end
    for _, field in ipairs(fields) do
        if redis.call('hget', group, field) ~= owner then
            return 0
        end
        local expires = tonumber(redis.call('hget', group, expire_field(field, owner)))
        if expires == nil or expires < now + lease then
            redis.call('hset', group, expire_field(field, owner), now + lease)
        end
    end
    if redis.call('pttl', group) < lease then
        redis.call('pexpire', group, lease)
    end
    return 1
end

if operation == 'force_unlock' then
    local held = 0
    for _, field in ipairs(fields) do
        local holder = redis.call('hget', group, field)
        if holder ~= false then
            redis.call('hdel', group, field, expire_field(field, holder), count_field(field, holder))
            held = held + 1
        end
    end
    redis.call(ARGV[5], KEYS[2], '0')
    return held
end

if operation == 'is_locked' then
    for _, field in ipairs(fields) do
        local holder = redis.call('hget', group, field)
        if holder ~= false then
            local expires = tonumber(redis.call('hget', group, expire_field(field, holder)))
            if expires ~= nil and expires >= now then
                return 1
            end
        end
    end
    return 0
end

if operation == 'is_held' then
    for _, field in ipairs(fields) do
        local expires = tonumber(redis.call('hget', group, expire_field(field, owner)))
        if expires == nil or expires < now then
            return 0
        end
    end
    return 1
end

return redis.error_reply('ERR redisson_group_lock.lua: no operation ' .. operation)
