-- Watchdog renewal of many simple locks in one call: compare-and-pexpire.
-- KEYS[i] lock key; ARGV[1] lease ms; ARGV[i + 1] owner token of KEYS[i].
-- Reply an array: 1 where the key still holds the token (TTL reset), else 0.
-- The TTL is set, where the hash locks only raise it (lock/renew.lua): a
-- simple lock has one hold, so no other hold can need a longer TTL.
-- pcall: a key replaced by another type counts as lost instead of failing the batch.
-- Reads first, then the PEXPIREs, each after the first checked before any
-- (renew_each.lua.part): the ACL may refuse one key and not another.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/renew_each.lua.part
return renew_each(function(lock, owner, expiring)
    if redis.pcall('get', lock) ~= owner then
        return false
    end
    expiring[#expiring + 1] = lock
    return true
end, 'renewing the lock')
