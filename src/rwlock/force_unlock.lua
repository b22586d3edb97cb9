#!lua flags=allow-oom
-- Read-write lock force unlock: delete the lock, whoever holds it, if it is in
-- the given mode, with every read-hold key, and wake the waiters.
-- KEYS[1] lock hash; ARGV[1] mode ('read' or 'write'), ARGV[2] unlock
-- message, ARGV[3] publish command, ARGV[4] channel (no key, as in lock/release.lua).
-- Reply 1 when a lock was deleted, else 0.
-- Publish before any write: a refused PUBLISH (ACL) leaves the lock as it
-- was; the DELs after it are checked before it (checked_calls.lua.part).
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/checked_lists.lua.part
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
-- The publish, then every read hold's key, then the hash.
local calls = {{ARGV[3], ARGV[4], ARGV[2]}}
for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
    local holds = tonumber(redis.call('hget', KEYS[1], field))
    if holds ~= nil then
        for n = 1, holds do
            calls[#calls + 1] = {'del', read_hold_key(KEYS[1], field, n)}
        end
    end
end
calls[#calls + 1] = {'del', KEYS[1]}
return run_calls(calls, 'force-unlocking the lock') or 1
