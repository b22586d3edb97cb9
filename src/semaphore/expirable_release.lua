#!lua flags=allow-oom
-- Permit-expirable semaphore release (Redisson RPermitExpirableSemaphore layout).
-- KEYS[1] free permits, KEYS[2] held permit ids; ARGV[1] now (epoch ms),
-- ARGV[2] publish command, ARGV[3] channel (no key, as in lock/release.lua),
-- ARGV[4...] permit ids (16 bytes each, no two alike).
-- Every id or none: when each is held, all go back to the count and their
-- number is published. Reply 1: released; 0: not held (one id never taken,
-- released before, or reclaimed: nothing changed), or held past its lease
-- (returned all the same).
-- allow-oom: a release must work on a full server (maxmemory, noeviction).
-- Publish before any write: a user whose ACL refuses the channel gets the
-- error with the permits still held.
-- The count is checked first, as every semaphore script does: INCRBY failing
-- after the ZREM would drop the permits; so are the ACL's rights to both
-- (checked_calls.lua.part).
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: ../primitive/stored_count.lua.part
local released = #ARGV - 3
local refused = checks_rights and refused_right({{ARGV[2], ARGV[3], released}}, 'releasing a permit')
if refused then
    return refused
end
local free, wrong_type = stored_count(KEYS[1])
if wrong_type then
    return wrong_type
end
local lapsed = false
for i = 4, #ARGV do
    local lease_end = redis.call('zscore', KEYS[2], ARGV[i])
    if not lease_end then
        return 0
    end
    lapsed = lapsed or tonumber(lease_end) <= tonumber(ARGV[1])
end
if not redis.acl_check_cmd('zrem', KEYS[2], ARGV[4]) then
    return refusal('zrem', KEYS[2], 'releasing a permit')
elseif not redis.acl_check_cmd('incrby', KEYS[1], released) then
    return refusal('incrby', KEYS[1], 'releasing a permit')
end
redis.call(ARGV[2], ARGV[3], released)
for i = 4, #ARGV, 1000 do
    redis.call('zrem', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
redis.call('incrby', KEYS[1], released)
if lapsed then
    return 0
end
return 1
