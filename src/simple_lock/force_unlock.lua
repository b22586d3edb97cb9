-- Simple lock force unlock: delete the key whoever holds it (GET first: a key of
-- another type is refused with WRONGTYPE, not deleted). Reply 1 if a lock was deleted, else 0.
-- KEYS[1] lock key.
if redis.call('get', KEYS[1]) then
    redis.call('del', KEYS[1])
    return 1
end
return 0
