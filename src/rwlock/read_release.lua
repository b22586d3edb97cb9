#!lua flags=allow-oom
-- Read lock release (Redisson RReadWriteLock layout, read side).
-- KEYS[1] lock hash; ARGV[1] unlock message ('0': one waiter may try), ARGV[2]
-- owner id, ARGV[3] publish command (publish or spublish), ARGV[4] channel
-- (no key, as in lock/release.lua).
-- Drops the owner's newest read hold and its key (read_hold.lua.part).
-- The last holder out deletes the hash and publishes.
-- Reply nil: the owner holds no read lock; 0: it still holds reads; 1: its
-- last read hold is released (whether or not others still hold the lock).
-- allow-oom: a release must work on a full server (maxmemory, noeviction).
-- Everything is decided first and published before any write: a user whose
-- ACL refuses the channel gets the error with the lock unchanged, and every
-- call after the first write or publish is checked before it
-- (checked_calls.lua.part).
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/checked_lists.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: read_hold.lua.part
local refused = checks_rights and refused_right({{'del', KEYS[1]}, {ARGV[3], ARGV[4], ARGV[1]}},
    'releasing the read lock')
if refused then
    return refused
end
local mode = redis.call('hget', KEYS[1], 'mode')
local holds = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if mode == false or holds == nil then
    return nil
end
local left = holds - 1
local reply = (left == 0) and 1 or 0
-- A downgrading writer still holds the write lock, whose lease is the hash's
-- TTL. Otherwise the hash lives as long as the longest read hold left (this
-- owner's included); readers whose hold keys all expired (dead holders) do
-- not count. None left: the hash goes, and the waiters are told.
local longest = -2
if mode ~= 'write' then
    for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
        local count = (field == ARGV[2]) and left or tonumber(redis.call('hget', KEYS[1], field))
        if count ~= nil then
            for n = 1, count do
                longest = math.max(longest, redis.call('pttl', read_hold_key(KEYS[1], field, n)))
            end
        end
    end
end
local publishes = mode ~= 'write' and longest <= 0
-- What this writes and publishes, in order, the first unchecked; the checked
-- script checked the hash's DEL with the release's rights.
local last_call = {''}
if mode ~= 'write' then
    last_call = longest > 0 and {'pexpire', KEYS[1], longest} or {checks_rights and '' or 'del', KEYS[1]}
end
local calls = {left == 0 and {'hdel', KEYS[1], ARGV[2]} or {'hincrby', KEYS[1], ARGV[2], -1},
    {'del', read_hold_key(KEYS[1], ARGV[2], holds)}, last_call}
if publishes then
    table.insert(calls, 1, {ARGV[3], ARGV[4], ARGV[1]})
end
local refused_after = refused_call(calls, 'releasing the read lock', 2)
if refused_after then
    return refused_after
end
if publishes then
    redis.call(ARGV[3], ARGV[4], ARGV[1])
end
if left == 0 then
    redis.call('hdel', KEYS[1], ARGV[2])
else
    redis.call('hincrby', KEYS[1], ARGV[2], -1)
end
redis.call('del', read_hold_key(KEYS[1], ARGV[2], holds))
if mode == 'write' then
    return reply
end
if longest > 0 then
    redis.call('pexpire', KEYS[1], longest)
    return reply
end
redis.call('del', KEYS[1])
return 1
