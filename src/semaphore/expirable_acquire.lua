-- Permit-expirable semaphore: reclaim ended leases, then take permits
-- (Redisson RPermitExpirableSemaphore layout).
-- KEYS[1] free permits, KEYS[2] ZSET of held permit ids (16 bytes) scored by
-- the end of their lease (epoch ms).
-- ARGV[1] now (epoch ms), ARGV[2] publish command, ARGV[3] channel (no key,
-- as in lock/release.lua), ARGV[4] the score that means "never ends"; to take
-- permits also ARGV[5] their lease's end and ARGV[6...] their ids, one per
-- permit: all of them are taken, or none.
-- Permits whose lease has ended go back to the count first (their holder is
-- gone, or late), and the new count is published: it may let waiters in.
-- Reply without ids: {free permits, taken permits}. With them: nil when
-- taken; else the ms until the nearest lease ends, or -1 when none will; a
-- NOPERM error, nothing taken, when the user could not give the permits back.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/checked_lists.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: ../primitive/stored_count.lua.part
local wanted = math.max(0, #ARGV - 5)
local refused = checks_rights and refused_right({{ARGV[2], ARGV[3], '1'}}, 'releasing a permit')
if refused then
    return refused
end
local free, wrong_type = stored_count(KEYS[1])
if wrong_type then
    return wrong_type
end
local ended = redis.call('zrangebyscore', KEYS[2], 0, ARGV[1])
local before = tonumber(free or 0)
free = before + #ended
local takes = wanted > 0 and free >= wanted
-- Reads first: the count's TTL is the ids' (INCRBY and DECRBY keep it).
local ttl = takes and redis.call('pttl', KEYS[1])
-- What this writes and publishes after its first write or publish, checked
-- before it (checked_calls.lua.part): a ZADD refused after its DECRBY would
-- lose the permits. Taking, the common path, checks inline.
if #ended > 0 then
    local calls = free > 0 and {{ARGV[2], ARGV[3], free}} or {}
    calls[#calls + 1] = {'zrem', KEYS[2], ended[1]}
    calls[#calls + 1] = {'incrby', KEYS[1], #ended}
    if takes then
        calls[#calls + 1] = {'decrby', KEYS[1], wanted}
    elseif wanted > 0 then
        calls[#calls + 1] = {'zrange', KEYS[2], 0, 0, 'WITHSCORES'}
    else
        calls[#calls + 1] = {'zcard', KEYS[2]}
    end
    local refused = refused_call(calls, 'taking a permit', 2)
    if refused then
        return refused
    end
end
if takes and not redis.acl_check_cmd('zadd', KEYS[2], ARGV[5], ARGV[6]) then
    return refusal('zadd', KEYS[2], 'taking a permit')
elseif takes and ttl > 0 and not redis.acl_check_cmd('pexpire', KEYS[2], ttl) then
    return refusal('pexpire', KEYS[2], 'taking a permit')
end
if #ended > 0 then
    if free > 0 then
        redis.call(ARGV[2], ARGV[3], free)
    end
    for i = 1, #ended, 1000 do
        redis.call('zrem', KEYS[2], unpack(ended, i, math.min(i + 999, #ended)))
    end
    redis.call('incrby', KEYS[1], #ended)
end
if wanted == 0 then
    return {free, redis.call('zcard', KEYS[2])}
end
if takes then
    redis.call('decrby', KEYS[1], wanted)
    for i = 6, #ARGV, 500 do
        local scored = {}
        for n = i, math.min(i + 499, #ARGV) do
            scored[#scored + 1] = ARGV[5]
            scored[#scored + 1] = ARGV[n]
        end
        redis.call('zadd', KEYS[2], unpack(scored))
    end
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
