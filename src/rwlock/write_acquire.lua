-- Write lock acquire (Redisson RReadWriteLock layout, write side).
-- KEYS[1] lock hash; ARGV[1] lease ms; ARGV[2] writer field <owner>:write;
-- ARGV[3] owner id (its reader field); ARGV[4] channel, ARGV[5] publish
-- command (for the release's rights).
-- Reply nil when taken (or re-entered), else the lock's remaining PTTL, or
-- 'read-held' when the caller holds a read lock: a read lock cannot be
-- upgraded, and waiting would wait for the caller itself. A NOPERM error,
-- nothing taken, when the user could not release it.
-- include: ../primitive/release_rights.lua.part
local refused = checks_rights and refused_right({{'hdel', KEYS[1], ARGV[2]}, {'hlen', KEYS[1]}, {'del', KEYS[1]},
    {ARGV[5], ARGV[4], '0'}}, 'releasing the write lock')
if refused then
    return refused
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false and redis.call('exists', KEYS[1]) == 0 then
    redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    -- Redisson's re-entry adds the lease to what is left.
    redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), 0) + tonumber(ARGV[1]))
    return nil
end
if mode == 'read' and redis.call('hexists', KEYS[1], ARGV[3]) == 1 then
    return 'read-held'
end
return redis.call('pttl', KEYS[1])
