-- Permit-expirable semaphore: move a held permit's lease end.
-- KEYS[1] free permits (routing only), KEYS[2] held permit ids; ARGV[1] now
-- (epoch ms), ARGV[2] the new lease end, ARGV[3] permit id (16 bytes).
-- Reply 1: moved; 0: not held, or its lease had already ended.
local lease_end = redis.call('zscore', KEYS[2], ARGV[3])
if not lease_end or tonumber(lease_end) <= tonumber(ARGV[1]) then
    return 0
end
redis.call('zadd', KEYS[2], ARGV[2], ARGV[3])
return 1
