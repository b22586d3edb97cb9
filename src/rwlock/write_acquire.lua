-- Write lock acquire (Redisson RReadWriteLock layout, write side).
-- KEYS[1] lock hash; ARGV[1] lease ms; ARGV[2] writer field <owner>:write;
-- ARGV[3] owner id (its reader field); ARGV[4] channel, ARGV[5] publish
-- command (for the release's rights).
-- Reply nil when taken (or re-entered), else the lock's remaining PTTL, or
-- 'read-held' when the caller holds a read lock: a read lock cannot be
-- upgraded, and waiting would wait for the caller itself. A NOPERM error,
-- nothing taken, when the user could not release it, or could not set the
-- lock's expiry (checked before the first write: checked_calls.lua.part).
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/release_rights.lua.part
local refused = checks_rights and refused_right({{'hdel', KEYS[1], ARGV[2]}, {'hlen', KEYS[1]}, {'del', KEYS[1]},
    {ARGV[5], ARGV[4], '0'}}, 'releasing the write lock')
if refused then
    return refused
end
local mode = redis.call('hget', KEYS[1], 'mode')
local creates = mode == false and redis.call('exists', KEYS[1]) == 0
local reenters = not creates and mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1
if creates or reenters then
    -- Redisson's re-entry adds the lease to what is left.
    local lease = creates and ARGV[1] or math.max(redis.call('pttl', KEYS[1]), 0) + tonumber(ARGV[1])
    if not redis.acl_check_cmd('pexpire', KEYS[1], lease) then
        return refusal('pexpire', KEYS[1], 'taking the write lock')
    end
    if creates then
        redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
    else
        redis.call('hincrby', KEYS[1], ARGV[2], 1)
    end
    redis.call('pexpire', KEYS[1], lease)
    return nil
end
if mode == 'read' and redis.call('hexists', KEYS[1], ARGV[3]) == 1 then
    return 'read-held'
end
return redis.call('pttl', KEYS[1])
