-- Watchdog renewal of many locks in one call (the RLock, fair, fenced and
-- write locks).
-- KEYS[i] lock hash; ARGV[1] lease ms; ARGV[i + 1] owner (or writer) field of KEYS[i].
-- Reply an array: 1 where the owner still holds the lock (TTL at least the
-- lease), else 0.
-- The TTL is raised to the lease, never lowered, as every hash lock script
-- does (rwlock/read_renew.lua, lock/partial_release.lua.part): another hold
-- on the same hash, a read hold of a downgraded writer or a longer explicit
-- lease, may need more.
-- pcall: a key replaced by another type counts as lost instead of failing the batch.
-- Reads first, then the PEXPIREs, each after the first checked before any
-- (renew_each.lua.part): the ACL may refuse one key and not another.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/renew_each.lua.part
return renew_each(function(lock, owner, expiring)
    if redis.pcall('hexists', lock, owner) ~= 1 then
        return false
    end
    if redis.call('pttl', lock) < tonumber(ARGV[1]) then
        expiring[#expiring + 1] = lock
    end
    return true
end, 'renewing the lock')
