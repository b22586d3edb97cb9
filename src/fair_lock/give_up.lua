#!lua flags=allow-oom
-- A fair lock waiter gives up (its wait ran out, or its acquire failed): it
-- leaves the queue, and the deadlines of everyone behind it drop by its queue
-- budget (each moved up one place), as RFairLock's do. If it was first while
-- the lock is free, the new first waiter is woken, since no unlock will come.
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] deadlines, KEYS[4] liveness hash;
-- ARGV[1] owner, ARGV[2] queue budget ms, ARGV[3] publish command, ARGV[4]
-- channel prefix (no key, as in lock/release.lua). Reply 1 if the owner was queued, else 0.
-- allow-oom: leaving must work on a full server too. The PUBLISH comes
-- before any write, so a refused one changes nothing, and every call after
-- the first write or publish is checked before it (checked_calls.lua.part).
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/checked_lists.lua.part
-- include: ../primitive/unlock_message.lua.part
local doing = 'leaving the fair lock queue'
local queue = redis.call('lrange', KEYS[2], 0, -1)
local at = nil
for i, waiter in ipairs(queue) do
    if waiter == ARGV[1] then
        at = i
        break
    end
end
if at == nil then
    local refused = refused_call({{'hdel', KEYS[4], ARGV[1]}}, doing)
    if refused then
        return refused
    end
    redis.call('zrem', KEYS[3], ARGV[1])
    redis.call('hdel', KEYS[4], ARGV[1])
    return 0
end
local wakes = at == 1 and #queue > 1 and redis.call('exists', KEYS[1]) == 0
local calls = wakes and {{ARGV[3], ARGV[4] .. ':' .. queue[2], unlock_message}} or {}
if at < #queue then
    calls[#calls + 1] = {'zincrby', KEYS[3], -tonumber(ARGV[2]), queue[at + 1]}
end
calls[#calls + 1] = {'zrem', KEYS[3], ARGV[1]}
calls[#calls + 1] = {'lrem', KEYS[2], 0, ARGV[1]}
calls[#calls + 1] = {'hdel', KEYS[4], ARGV[1]}
local refused = refused_call(calls, doing, 2)
if refused then
    return refused
end
if wakes then
    redis.call(ARGV[3], ARGV[4] .. ':' .. queue[2], unlock_message)
end
for i = at + 1, #queue do
    redis.call('zincrby', KEYS[3], -tonumber(ARGV[2]), queue[i])
end
redis.call('zrem', KEYS[3], ARGV[1])
redis.call('lrem', KEYS[2], 0, ARGV[1])
redis.call('hdel', KEYS[4], ARGV[1])
return 1
