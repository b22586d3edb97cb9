#!lua flags=allow-oom
-- A waiter of the reentrant lock stops waiting (deadline, stop, error): it
-- leaves the list of waiters (handoff.lua.part), and a promise of the free
-- lock made to it goes to the next listed waiter, or, with none, to whoever
-- asks first, told by a bare `0`.
-- KEYS[1] lock hash; ARGV[1] waiter id, ARGV[2] publish command, ARGV[3]
-- channel, ARGV[4] promise ms, ARGV[5] waiters, ARGV[6] promise, ARGV[7] '1'
-- on a cluster, where the lock's slot may migrate.
-- Reply 1 when a promise was passed on, else 0.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: ../primitive/unlock_message.lua.part
local waiters_key, promise_key, slot_moves = ARGV[5] or '', ARGV[6] or '', ARGV[7] == '1'
-- include: handoff.lua.part
-- include: promise.lua.part
if not targeted then
    return 0
end
local passes = side('get', promise_key) == ARGV[1] and redis.call('exists', KEYS[1]) == 0
local named = nil
if passes then
    for _, listed in ipairs(side('zrange', waiters_key, 0, 1) or {}) do
        if listed ~= ARGV[1] then
            named = listed
            break
        end
    end
    if named then
        redis.call(ARGV[2], ARGV[3], named)
    end
    redis.call(ARGV[2], ARGV[3], unlock_message)
end
side('zrem', waiters_key, ARGV[1])
if not passes then
    return 0
end
side('del', promise_key)
if named then
    promise_to(named, ARGV[4])
end
return 1
