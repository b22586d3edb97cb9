#!lua flags=allow-oom
-- Reentrant lock release (Redisson RLock layout).
-- KEYS[1] lock hash, KEYS[2] channel; ARGV[1] unlock message, ARGV[2] lease ms
-- to raise a still-held lock's TTL to (0: keep its TTL, for an explicit lease),
-- ARGV[3] owner id, ARGV[4] publish command (publish or spublish; empty: the
-- spin lock, which has no channel and passes no KEYS[2]).
-- Reply nil: not the owner; 0: still held (count > 0); 1: released and published.
-- allow-oom: a release must work on a full server (maxmemory, noeviction).
-- Publish before any write: a user whose ACL refuses the channel gets the
-- error with the lock unchanged (waiters see the message after the script).
local holds = tonumber(redis.call('hget', KEYS[1], ARGV[3]))
if holds == nil then
    return nil
end
if holds > 1 then
    redis.call('hincrby', KEYS[1], ARGV[3], -1)
    -- Raised to the lease, never lowered (as lock/renew.lua).
    if tonumber(ARGV[2]) > 0 and redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then
        redis.call('pexpire', KEYS[1], ARGV[2])
    end
    return 0
end
if ARGV[4] ~= '' then
    redis.call(ARGV[4], KEYS[2], ARGV[1])
end
redis.call('del', KEYS[1])
return 1
