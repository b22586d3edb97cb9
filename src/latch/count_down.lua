#!lua flags=allow-oom
-- Count-down latch count down (Redisson RCountDownLatch layout).
-- KEYS[1] count; ARGV[1] message (`0`), ARGV[2] publish command, ARGV[3]
-- channel (no key, as in lock/release.lua).
-- At 0 or below the key goes (an absent latch is open); reaching 0 publishes
-- `0`, which wakes every waiter. Reply: the new count.
-- allow-oom: counting down must work on a full server (maxmemory, noeviction).
-- Publish before any write: a user whose ACL refuses the channel gets the
-- error with the count unchanged (waiters see the message after the script);
-- the DEL after the publish is checked before it (checked_calls.lua.part).
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: ../primitive/stored_count.lua.part
local refused = checks_rights and refused_right({{ARGV[2], ARGV[3], ARGV[1]}}, 'counting down')
if refused then
    return refused
end
local count, wrong_type = stored_count(KEYS[1])
if wrong_type then
    return wrong_type
end
local before = tonumber(count or 0)
if before > 1 then
    return redis.call('decr', KEYS[1])
end
if before == 1 then
    if not redis.acl_check_cmd('del', KEYS[1]) then
        return refusal('del', KEYS[1], 'counting down')
    end
    redis.call(ARGV[2], ARGV[3], ARGV[1])
end
redis.call('del', KEYS[1])
return before - 1
