-- Write lock release (Redisson RReadWriteLock layout, write side).
-- KEYS[1] lock hash, KEYS[2] channel; ARGV[1] unlock message ('1': every
-- waiter may try), ARGV[2] lease ms to reset a still-held lock to (0: keep
-- its TTL, for an explicit lease), ARGV[3] writer field <owner>:write,
-- ARGV[4] publish command (publish or spublish).
-- Reply nil: not the writer; 0: still held (count > 0); 1: its last write hold
-- released and published.
if redis.call('hget', KEYS[1], 'mode') ~= 'write' or redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return nil
end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
    if tonumber(ARGV[2]) > 0 then
        redis.call('pexpire', KEYS[1], ARGV[2])
    end
    return 0
end
redis.call('hdel', KEYS[1], ARGV[3])
if redis.call('hlen', KEYS[1]) == 1 then
    redis.call('del', KEYS[1])
else
    -- The writer still holds read locks (downgrade): readers may now share it.
    -- Redisson stays silent here; holdfast wakes them (harmless to Java waiters,
    -- who just try again).
    redis.call('hset', KEYS[1], 'mode', 'read')
end
redis.call(ARGV[4], KEYS[2], ARGV[1])
return 1
