#!lua flags=allow-oom
-- Reentrant lock release (Redisson RLock layout).
-- KEYS[1] lock hash; ARGV[1] unlock message, ARGV[2] lease ms to raise a
-- still-held lock's TTL to (0: keep its TTL, for an explicit lease), ARGV[3]
-- owner id, ARGV[4] publish command (publish or spublish; empty: the spin
-- lock, which announces nothing), ARGV[5] channel; for targeted wake-ups
-- (handoff.lua.part), ARGV[6] how long the first listed waiter is promised
-- the lock (ms), ARGV[7] the waiters and ARGV[8] the promise (empty: none),
-- ARGV[9] '1' on a cluster, where the lock's slot may migrate.
-- The channel is no key: declared, it would fail the call in a slot being
-- migrated (TRYAGAIN: a key that never exists) and need a key ACL pattern.
-- Reply nil: not the owner; 0: still held (count > 0); 1: released and published.
-- allow-oom: a release must work on a full server (maxmemory, noeviction).
-- Rights checked, then the publish, before any write: a refused call leaves
-- the lock unchanged (waiters see the message after the script). The
-- trusted twin checks the DEL after the publish (checked_calls.lua.part).
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: partial_release.lua.part
local waiters_key, promise_key, slot_moves = ARGV[7] or '', ARGV[8] or '', ARGV[9] == '1'
-- include: handoff.lua.part
-- include: promise.lua.part
local refused = checks_rights and refused_right({{'del', KEYS[1]}, {ARGV[4], ARGV[5], ARGV[1]}}, 'releasing the lock')
if refused then
    return refused
end
local holds = tonumber(redis.call('hget', KEYS[1], ARGV[3]))
if holds == nil then
    return nil
end
local partial = partial_release(ARGV[3], holds, ARGV[2], 'releasing the lock')
if partial then
    return partial == true and 0 or partial
end
local named = nil
if ARGV[4] ~= '' then
    -- The checked script checked the DEL with the release's rights.
    if not checks_rights and not redis.acl_check_cmd('del', KEYS[1]) then
        return refusal('del', KEYS[1], 'releasing the lock')
    end
    -- Read only: a write here, before the publish, would break the rule that
    -- a refused publish changed nothing (ZPOPMIN did). On the uncontended
    -- release's missing list ZRANGE is as cheap as the EXISTS it replaces.
    if targeted then
        named = (side('zrange', waiters_key, 0, 0) or {})[1]
    end
    if named then
        redis.call(ARGV[4], ARGV[5], named)
    end
    redis.call(ARGV[4], ARGV[5], ARGV[1])
end
redis.call('del', KEYS[1])
if named then
    promise_to(named, ARGV[6])
end
return 1
