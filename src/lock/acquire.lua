-- Reentrant lock acquire (Redisson RLock layout).
-- KEYS[1] lock hash; ARGV[1] lease ms; ARGV[2] owner id; ARGV[3] channel,
-- ARGV[4] publish command (publish or spublish; empty: the spin lock, which
-- announces nothing).
-- Reply nil when taken (or re-entered), else the holder's remaining PTTL; a
-- NOPERM error, nothing taken, when the user could not release it.
-- include: ../primitive/release_rights.lua.part
local refused = checks_rights and refused_right({{'hget', KEYS[1], ARGV[2]}, {'del', KEYS[1]}, {ARGV[4], ARGV[3], '0'}},
    'releasing the lock')
if refused then
    return refused
end
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
return redis.call('pttl', KEYS[1])
