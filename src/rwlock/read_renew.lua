-- Watchdog renewal of read holds, many locks in one call.
-- KEYS[i] lock hash; ARGV[1] lease ms; ARGV[i + 1] owner id of KEYS[i].
-- Resets the TTL of each of the owner's read-hold keys (read_hold.lua.part)
-- to the lease, and raises the hash's TTL to at least the lease (never lowers
-- it: a writer or another reader may need more).
-- Only the owner's own holds: a dead reader's keys are left to expire.
-- Reply an array: 1 where the owner still holds reads, else 0.
-- pcall: a key replaced by another type counts as lost instead of failing the batch.
-- Reads first, then the PEXPIREs, each after the first checked before any
-- (renew_each.lua.part): the ACL may refuse one key and not another.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/renew_each.lua.part
-- include: read_hold.lua.part
return renew_each(function(lock, owner, expiring)
    local holds = tonumber(redis.pcall('hget', lock, owner))
    if holds == nil then
        return false
    end
    for n = 1, holds do
        expiring[#expiring + 1] = read_hold_key(lock, owner, n)
    end
    if redis.call('pttl', lock) < tonumber(ARGV[1]) then
        expiring[#expiring + 1] = lock
    end
    return true
end, 'renewing the read lock')
