-- Reentrant lock release (Redisson RLock layout).
-- KEYS[1] lock hash, KEYS[2] channel; ARGV[1] unlock message, ARGV[2] lease ms
-- to reset a still-held lock to (0: keep its TTL, for an explicit lease),
-- ARGV[3] owner id, ARGV[4] publish command (publish or spublish; empty: the
-- spin lock, which has no channel and passes no KEYS[2]).
-- Reply nil: not the owner; 0: still held (count > 0); 1: released and published.
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return nil
end
-- The last hold is deleted without decrementing it first: DEL needs no memory,
-- so a full server (maxmemory, noeviction) still lets the lock go.
if tonumber(redis.call('hget', KEYS[1], ARGV[3])) > 1 then
    redis.call('hincrby', KEYS[1], ARGV[3], -1)
    if tonumber(ARGV[2]) > 0 then
        redis.call('pexpire', KEYS[1], ARGV[2])
    end
    return 0
end
redis.call('del', KEYS[1])
if ARGV[4] ~= '' then
    redis.call(ARGV[4], KEYS[2], ARGV[1])
end
return 1
