-- Semaphore release and add-permits (Redisson RSemaphore layout).
-- KEYS[1] free permits, KEYS[2] channel; ARGV[1] permits to add (release:
-- > 0; add-permits: either sign), ARGV[2] publish command.
-- Publishes the new count when permits are free: a waiter reading it wakes
-- that many of its waiters. (Redisson publishes even a count <= 0; a Java
-- peer would hand that to Semaphore.release, which refuses a negative.)
-- Reply: the new count.
local free = redis.call('get', KEYS[1])
if free and not string.match(free, '^-?%d+$') then
    return redis.error_reply('WRONGTYPE the key holds a string that is not a count')
end
free = redis.call('incrby', KEYS[1], ARGV[1])
if free > 0 then
    redis.call(ARGV[2], KEYS[2], free)
end
return free
