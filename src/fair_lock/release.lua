#!lua flags=allow-oom
-- Fair lock release: as the RLock's, but the message goes only to the first
-- live waiter's own channel (prefix:<owner>); dead heads are dropped first,
-- as the acquire script presumes them dead. A lock whose lease already ran
-- out is released as RFairLock does: the first waiter is woken, reply 1.
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] deadlines, KEYS[4] liveness hash;
-- ARGV[1] unlock message, ARGV[2] lease ms to raise a still-held lock's TTL
-- to (0: keep it), ARGV[3] owner, ARGV[4] now (epoch ms), ARGV[5] publish
-- command, ARGV[6] channel prefix (no key, as in lock/release.lua).
-- Reply nil: not the owner; 0: still held; 1: released (and the head woken).
-- allow-oom: a full server (maxmemory, noeviction) must still let a lock go.
-- Reads first, the one PUBLISH next, writes last: a refused PUBLISH (ACL)
-- leaves the lock held and unchanged, and every call after the first write
-- or publish is checked before it (checked_calls.lua.part).
local now = tonumber(ARGV[4])
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/checked_lists.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: ../lock/partial_release.lua.part
local doing = 'releasing the fair lock'
local refused = checks_rights and refused_right({{'del', KEYS[1]}, {ARGV[5], ARGV[6] .. ':' .. ARGV[3], ARGV[1]}},
    doing)
if refused then
    return refused
end
-- include: dead_heads.lua.part
local head, dead = first_live(nil)

local held = redis.call('exists', KEYS[1]) == 1
if held then
    -- As lock/release.lua: a field that is no hold count is no hold.
    local holds = tonumber(redis.call('hget', KEYS[1], ARGV[3]))
    if holds == nil then
        refused = refused_call(dead_calls(dead, {}), doing, 2)
        if refused then
            return refused
        end
        drop_dead(dead)
        return nil
    end
    -- One of several holds: the HINCRBY is the first write, the dead's drop comes after.
    refused = holds > 1 and dead > 0 and refused_call(dead_calls(dead, {}), doing)
    if refused then
        return refused
    end
    local partial = partial_release(ARGV[3], holds, ARGV[2], doing)
    if partial == true then
        drop_dead(dead)
        return 0
    elseif partial then
        return partial
    end
end
-- What this writes and publishes, the first unchecked: the common case
-- (no one dead) checks at most the DEL after the publish, which the checked
-- script checked with the release's rights.
local del = held and not checks_rights and 'del' or ''
if dead > 0 then
    local calls = dead_calls(dead, head ~= false and {{ARGV[5], ARGV[6] .. ':' .. head, ARGV[1]}} or {})
    calls[#calls + 1] = {del, KEYS[1]}
    refused = refused_call(calls, doing, 2)
elseif head ~= false and del ~= '' and not redis.acl_check_cmd('del', KEYS[1]) then
    refused = refusal('del', KEYS[1], doing)
end
if refused then
    return refused
end
if head ~= false then
    redis.call(ARGV[5], ARGV[6] .. ':' .. head, ARGV[1])
end
drop_dead(dead)
if held then
    redis.call('del', KEYS[1])
end
return 1
