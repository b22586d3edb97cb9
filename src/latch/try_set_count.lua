-- Count-down latch set-count-if-absent (Redisson RCountDownLatch layout).
-- KEYS[1] count, KEYS[2] channel; ARGV[1] message (`1`), ARGV[2] count (> 0),
-- ARGV[3] publish command.
-- Reply 1: set, and `1` published; 0: the latch has a count already.
-- Publish before the SET: a refused PUBLISH (ACL) sets nothing.
if redis.call('exists', KEYS[1]) == 1 then
    return 0
end
redis.call(ARGV[3], KEYS[2], ARGV[1])
redis.call('set', KEYS[1], ARGV[2])
return 1
