#!lua flags=allow-oom
-- Force unlock: delete the lock whoever holds it and wake the waiters.
-- KEYS[1] lock hash; ARGV[1] unlock message, ARGV[2] publish command (empty:
-- no channel), ARGV[3] channel (no key, as in lock/release.lua).
-- Reply 1 when a lock was deleted, else 0.
-- HLEN: a key of another type is no lock to delete (WRONGTYPE, key kept).
-- Publish before the DEL: a refused PUBLISH (ACL) leaves the lock as it was;
-- the trusted twin checks the DEL before it (checked_calls.lua.part).
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/release_rights.lua.part
local refused = checks_rights and refused_right({{'del', KEYS[1]}, {ARGV[2], ARGV[3], ARGV[1]}},
    'force-unlocking the lock')
if refused then
    return refused
end
if redis.call('hlen', KEYS[1]) == 0 then
    return 0
end
if ARGV[2] ~= '' then
    if not checks_rights and not redis.acl_check_cmd('del', KEYS[1]) then
        return refusal('del', KEYS[1], 'force-unlocking the lock')
    end
    redis.call(ARGV[2], ARGV[3], ARGV[1])
end
redis.call('del', KEYS[1])
return 1
