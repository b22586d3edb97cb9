-- Semaphore drain (Redisson RSemaphore layout).
-- KEYS[1] free permits. Takes every free permit (the count becomes 0, its
-- TTL kept) and replies how many that was (0 when no count is set).
local free = redis.call('get', KEYS[1])
if not free then
    return 0
end
if not string.match(free, '^-?%d+$') then
    return redis.error_reply('WRONGTYPE the key holds a string that is not a count')
end
redis.call('decrby', KEYS[1], free)
return tonumber(free)
