-- Permit-expirable semaphore: make the total, free and taken, a given number
-- (Redisson RPermitExpirableSemaphore.setPermits layout: no key holds the
-- total; it is the free count plus the ids in the ZSET).
-- KEYS[1] free permits, KEYS[2] held permit ids; ARGV[1] the total (>= 0),
-- ARGV[2] publish command, ARGV[3] channel (no key, as in lock/release.lua).
-- The free count moves by the difference (INCRBY, keeping its TTL; SET when
-- there is no count), and goes below 0 when more are taken than the total.
-- A new free count above 0 is published, as a release's is. Ids whose lease
-- ended count as taken until an acquire returns them, which adds them back to
-- the free count: the total stays right either way.
-- Reply: the free count now.
-- Counts Lua's doubles cannot hold exactly (past 2^53) are refused (OVERFLOW).
-- Publish before the write, checked before it (checked_calls.lua.part).
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/stored_count.lua.part
local free, wrong_type = stored_count(KEYS[1])
if wrong_type then
    return wrong_type
end
local exact = 2 ^ 53
local taken = redis.call('zcard', KEYS[2])
local total = tonumber(ARGV[1])
local now_free = tonumber(free or 0)
if math.abs(now_free) > exact or total > exact then
    return redis.error_reply('OVERFLOW the count is past what the script counts exactly (2^53)')
end
local after = total - taken
if free and after == now_free then
    return after
end
local write = {'set', KEYS[1], string.format('%.0f', after)}
if free then
    write = {'incrby', KEYS[1], string.format('%.0f', after - now_free)}
end
if not redis.acl_check_cmd(unpack(write)) then
    return refusal(write[1], KEYS[1], 'setting the permits')
end
if after > 0 then
    redis.call(ARGV[2], ARGV[3], string.format('%.0f', after))
end
redis.call(unpack(write))
return after
