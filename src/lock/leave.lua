#!lua flags=allow-oom
-- A waiter of the reentrant lock stops waiting (deadline, stop, error): it
-- leaves the list of waiters, and a promise of the free lock made to it
-- (handoff.lua.part) goes to the next listed waiter, or, with none, to
-- whoever asks first, told by a bare `0`.
-- KEYS[1] lock hash; ARGV[1] waiter id, ARGV[2] publish command, ARGV[3]
-- channel, ARGV[4] promise ms, ARGV[5] waiters, ARGV[6] promise.
-- Reply 1 when a promise was passed on, else 0.
-- include: ../primitive/release_rights.lua.part
local waiters_key, promise_key = ARGV[5] or '', ARGV[6] or ''
-- include: handoff.lua.part
if not targeted then
    return 0
end
local passes = redis.call('get', promise_key) == ARGV[1] and redis.call('exists', KEYS[1]) == 0
local next = nil
if passes then
    next = first_waiter(ARGV[1])
    announce(ARGV[2], ARGV[3], next, '0')
end
redis.call('zrem', waiters_key, ARGV[1])
if not passes then
    return 0
end
redis.call('del', promise_key)
promise(next, ARGV[4])
return 1
