-- Fair lock force unlock: delete the lock whoever holds it; wake the first waiter.
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[4] channel prefix (KEYS[3] deadlines,
-- unused, keeps the key order of the other scripts); ARGV[1] unlock message,
-- ARGV[2] publish command. Reply 1 when a lock was deleted, else 0.
if redis.call('del', KEYS[1]) == 1 then
    local head = redis.call('lindex', KEYS[2], 0)
    if head ~= false then
        redis.call(ARGV[2], KEYS[4] .. ':' .. head, ARGV[1])
    end
    return 1
end
return 0
