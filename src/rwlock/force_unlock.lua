#!lua flags=allow-oom
-- Read-write lock force unlock: delete the lock, whoever holds it, if it is in
-- the given mode, with every read-hold key, and wake the waiters.
-- KEYS[1] lock hash; ARGV[1] mode ('read' or 'write'), ARGV[2] unlock
-- message, ARGV[3] publish command, ARGV[4] channel (no key, as in lock/release.lua).
-- Reply 1 when a lock was deleted, else 0.
-- Publish before any write: a refused PUBLISH (ACL) leaves the lock as it was.
-- include: ../primitive/release_rights.lua.part
-- include: read_hold.lua.part
local refused = checks_rights and refused_right({{'del', KEYS[1]}, {ARGV[3], ARGV[4], ARGV[2]}},
    'force-unlocking the lock')
if refused then
    return refused
end
if redis.call('hget', KEYS[1], 'mode') ~= ARGV[1] then
    return 0
end
redis.call(ARGV[3], ARGV[4], ARGV[2])
for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
    local holds = tonumber(redis.call('hget', KEYS[1], field))
    if holds ~= nil then
        for n = 1, holds do
            redis.call('del', read_hold_key(KEYS[1], field, n))
        end
    end
end
redis.call('del', KEYS[1])
return 1
