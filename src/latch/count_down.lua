-- Count-down latch count down (Redisson RCountDownLatch layout).
-- KEYS[1] count, KEYS[2] channel; ARGV[1] message (`0`), ARGV[2] publish
-- command.
-- At 0 or below the key goes (an absent latch is open); reaching 0 publishes
-- `0`, which wakes every waiter. Reply: the new count.
local count = redis.call('get', KEYS[1])
if count and not string.match(count, '^-?%d+$') then
    return redis.error_reply('WRONGTYPE the key holds a string that is not a count')
end
count = redis.call('decr', KEYS[1])
if count <= 0 then
    redis.call('del', KEYS[1])
end
if count == 0 then
    redis.call(ARGV[2], KEYS[2], ARGV[1])
end
return count
