-- Reentrant lock acquire (Redisson RLock layout).
-- KEYS[1] lock hash; ARGV[1] lease ms; ARGV[2] owner id.
-- Reply nil when taken (or re-entered), else the holder's remaining PTTL.
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
return redis.call('pttl', KEYS[1])
