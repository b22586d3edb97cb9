-- Semaphore drain (Redisson RSemaphore layout).
-- KEYS[1] free permits. Takes every free permit (the count becomes 0, its
-- TTL kept) and replies how many that was (0 when no count is set).
-- include: ../primitive/stored_count.lua.part
local free, wrong_type = stored_count(KEYS[1])
if wrong_type then
    return wrong_type
end
if not free then
    return 0
end
redis.call('decrby', KEYS[1], free)
return tonumber(free)
