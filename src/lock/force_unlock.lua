-- Force unlock: delete the lock whoever holds it and wake the waiters.
-- KEYS[1] lock hash, KEYS[2] channel; ARGV[1] unlock message, ARGV[2] publish
-- command (empty: no channel, no KEYS[2]).
-- Reply 1 when a lock was deleted, else 0.
-- HLEN first: a key of another type is no lock to delete (WRONGTYPE, key kept).
redis.call('hlen', KEYS[1])
if redis.call('del', KEYS[1]) == 1 then
    if ARGV[2] ~= '' then
        redis.call(ARGV[2], KEYS[2], ARGV[1])
    end
    return 1
end
return 0
