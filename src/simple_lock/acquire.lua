-- Simple lock acquire: the SET NX PX lock of redis-plus-plus, go-redsync and node-redlock.
-- KEYS[1] lock key (a plain string holding its holder's token); ARGV[1] lease ms; ARGV[2] owner token.
-- Reply nil when taken; -3 when the caller already holds it (not reentrant); else the holder's
-- PTTL (-1: a key set without expiry). GET raises WRONGTYPE for a key of another type.
if redis.call('set', KEYS[1], ARGV[2], 'nx', 'px', ARGV[1]) then
    return nil
end
if redis.call('get', KEYS[1]) == ARGV[2] then
    return -3
end
return redis.call('pttl', KEYS[1])
