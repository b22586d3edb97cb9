#!lua flags=allow-oom
-- Fair lock force unlock: delete the lock whoever holds it and wake the first
-- live waiter (dead heads are dropped first, as the release drops them).
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] deadlines, KEYS[4] liveness hash;
-- ARGV[1] unlock message, ARGV[2] publish command, ARGV[3] now (epoch ms),
-- ARGV[4] channel prefix (no key, as in lock/release.lua). Reply 1 when a lock was deleted, else 0.
-- allow-oom, and the PUBLISH before any write, as in the release.
local now = tonumber(ARGV[3])
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/checked_lists.lua.part
-- include: ../primitive/release_rights.lua.part
local refused = checks_rights and refused_right({{'del', KEYS[1]}, {ARGV[2], ARGV[4], ARGV[1]}},
    'force-unlocking the fair lock')
if refused then
    return refused
end
-- include: dead_heads.lua.part
local head, dead = first_live(nil)

-- HLEN, as lock/force_unlock.lua: a key of another type is no lock to delete
-- (WRONGTYPE, key kept).
local held = redis.call('hlen', KEYS[1]) > 0
-- What this writes and publishes, in order, the first unchecked; the checked
-- script checked the DEL with the release's rights.
local calls = dead_calls(dead, held and head ~= false and {{ARGV[2], ARGV[4] .. ':' .. head, ARGV[1]}} or {})
calls[#calls + 1] = {held and not checks_rights and 'del' or '', KEYS[1]}
local refused_after = refused_call(calls, 'force-unlocking the fair lock', 2)
if refused_after then
    return refused_after
end
if held and head ~= false then
    redis.call(ARGV[2], ARGV[4] .. ':' .. head, ARGV[1])
end
drop_dead(dead)
if held then
    redis.call('del', KEYS[1])
    return 1
end
return 0
