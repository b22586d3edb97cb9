-- Count-down latch set-count-if-absent (Redisson RCountDownLatch layout).
-- KEYS[1] count, KEYS[2] channel; ARGV[1] message (`1`), ARGV[2] count (> 0),
-- ARGV[3] publish command.
-- Reply 1: set, and `1` published; 0: the latch has a count already.
-- A key of another type, or a string that is no count, is refused (WRONGTYPE)
-- as by count_down.lua, not taken for an existing count.
-- Publish before the SET: a refused PUBLISH (ACL) sets nothing.
local count = redis.call('get', KEYS[1])
if count then
    if not string.match(count, '^-?%d+$') then
        return redis.error_reply('WRONGTYPE the key holds a string that is not a count')
    end
    return 0
end
redis.call(ARGV[3], KEYS[2], ARGV[1])
redis.call('set', KEYS[1], ARGV[2])
return 1
