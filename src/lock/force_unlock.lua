#!lua flags=allow-oom
-- Force unlock: delete the lock whoever holds it and wake the waiters.
-- KEYS[1] lock hash, KEYS[2] channel; ARGV[1] unlock message, ARGV[2] publish
-- command (empty: no channel, no KEYS[2]).
-- Reply 1 when a lock was deleted, else 0.
-- HLEN: a key of another type is no lock to delete (WRONGTYPE, key kept).
-- Publish before the DEL: a refused PUBLISH (ACL) leaves the lock as it was.
if redis.call('hlen', KEYS[1]) == 0 then
    return 0
end
if ARGV[2] ~= '' then
    redis.call(ARGV[2], KEYS[2], ARGV[1])
end
redis.call('del', KEYS[1])
return 1
