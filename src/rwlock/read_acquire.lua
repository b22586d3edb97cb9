-- Read lock acquire (Redisson RReadWriteLock layout, read side).
-- KEYS[1] lock hash; ARGV[1] lease ms; ARGV[2] owner id; ARGV[3] the owner's
-- writer field (<owner>:write): the writer may take read locks (downgrade).
-- Read hold n of an owner has its own key (read_hold.lua.part) = 1 with the
-- lease as TTL.
-- ARGV[4] channel, ARGV[5] publish command (for the release's rights).
-- Reply nil when taken (or re-entered), else the lock's remaining PTTL; a
-- NOPERM error, nothing taken, when the user could not release it, or
-- could not make the hold whole (the calls after the first write are checked
-- before it: checked_calls.lua.part).
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: read_hold.lua.part
local refused = checks_rights and refused_right({{'hkeys', KEYS[1]}, {'hdel', KEYS[1], ARGV[2]}, {'del', KEYS[1]},
    {ARGV[5], ARGV[4], '0'}}, 'releasing the read lock')
if refused then
    return refused
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    -- A hash without a mode is not a read-write lock: wait for it like any holder.
    if redis.call('exists', KEYS[1]) == 1 then
        return redis.call('pttl', KEYS[1])
    end
elseif mode ~= 'read' and redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return redis.call('pttl', KEYS[1])
end
-- The hash lives as long as its longest hold: raise its TTL, never lower it.
local raise = redis.call('pttl', KEYS[1]) < tonumber(ARGV[1])
local next_hold = read_hold_key(KEYS[1], ARGV[2], (tonumber(redis.call('hget', KEYS[1], ARGV[2])) or 0) + 1)
-- The calls after the first write: the HINCRBY after a new hash's mode, the hold's key, the expiry.
if mode == false and not redis.acl_check_cmd('hincrby', KEYS[1], ARGV[2], 1) then
    return refusal('hincrby', KEYS[1], 'taking the read lock')
elseif not redis.acl_check_cmd('set', next_hold, 1, 'px', ARGV[1]) then
    return refusal('set', next_hold, 'taking the read lock')
elseif raise and not redis.acl_check_cmd('pexpire', KEYS[1], ARGV[1]) then
    return refusal('pexpire', KEYS[1], 'taking the read lock')
end
if mode == false then
    redis.call('hset', KEYS[1], 'mode', 'read')
end
local hold = redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('set', read_hold_key(KEYS[1], ARGV[2], hold), 1, 'px', ARGV[1])
if raise then
    redis.call('pexpire', KEYS[1], ARGV[1])
end
return nil
