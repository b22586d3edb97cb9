#!lua flags=allow-oom
-- Write lock release (Redisson RReadWriteLock layout, write side).
-- KEYS[1] lock hash; ARGV[1] unlock message ('1': every waiter may try),
-- ARGV[2] lease ms to raise a still-held lock's TTL to (0: keep its TTL, for
-- an explicit lease), ARGV[3] writer field <owner>:write, ARGV[4] publish
-- command (publish or spublish), ARGV[5] channel (no key, as in lock/release.lua).
-- Reply nil: not the writer; 0: still held (count > 0); 1: its last write hold
-- released and published.
-- allow-oom: a release must work on a full server (maxmemory, noeviction).
-- Publish before any write: a user whose ACL refuses the channel gets the
-- error with the lock unchanged (waiters see the message after the script);
-- the calls after it are checked before it (checked_calls.lua.part).
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: ../lock/partial_release.lua.part
local refused = checks_rights and refused_right({{'del', KEYS[1]}, {ARGV[4], ARGV[5], ARGV[1]}},
    'releasing the write lock')
if refused then
    return refused
end
local holds = tonumber(redis.call('hget', KEYS[1], ARGV[3]))
if redis.call('hget', KEYS[1], 'mode') ~= 'write' or holds == nil then
    return nil
end
local partial = partial_release(ARGV[3], holds, ARGV[2], 'releasing the write lock')
if partial then
    return partial == true and 0 or partial
end
-- The writer may still hold read locks (downgrade): readers may then share
-- it. Redisson stays silent there; holdfast wakes them (harmless to Java
-- waiters, who just try again). The mode and this field left: nothing else
-- holds it. (The checked script checked the DEL with the release's rights.)
local last = redis.call('hlen', KEYS[1]) == 2
local doing = 'releasing the write lock'
if not redis.acl_check_cmd('hdel', KEYS[1], ARGV[3]) then
    return refusal('hdel', KEYS[1], doing)
elseif last and not checks_rights and not redis.acl_check_cmd('del', KEYS[1]) then
    return refusal('del', KEYS[1], doing)
elseif not last and not redis.acl_check_cmd('hset', KEYS[1], 'mode', 'read') then
    return refusal('hset', KEYS[1], doing)
end
redis.call(ARGV[4], ARGV[5], ARGV[1])
redis.call('hdel', KEYS[1], ARGV[3])
if last then
    redis.call('del', KEYS[1])
else
    redis.call('hset', KEYS[1], 'mode', 'read')
end
return 1
