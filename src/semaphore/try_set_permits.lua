-- Semaphore set-permits-if-absent (Redisson RSemaphore layout).
-- KEYS[1] free permits, KEYS[2] channel; ARGV[1] permits (>= 0), ARGV[2]
-- publish command.
-- Reply 1: set, and the count published; 0: a count exists already.
-- Publish before the SET: a refused PUBLISH (ACL) sets nothing.
if redis.call('get', KEYS[1]) then
    return 0
end
redis.call(ARGV[2], KEYS[2], ARGV[1])
redis.call('set', KEYS[1], ARGV[1])
return 1
