-- Watchdog renewal of many locks in one call.
-- KEYS[i] lock hash; ARGV[1] lease ms; ARGV[i + 1] owner id of KEYS[i].
-- Reply an array: 1 where the owner still holds the lock (TTL reset), else 0.
-- pcall: a key replaced by another type counts as lost instead of failing the batch.
local renewed = {}
for i = 1, #KEYS do
    local held = redis.pcall('hexists', KEYS[i], ARGV[i + 1])
    if held == 1 then
        redis.call('pexpire', KEYS[i], ARGV[1])
        renewed[i] = 1
    else
        renewed[i] = 0
    end
end
return renewed
