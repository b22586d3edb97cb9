-- Watchdog renewal of many simple locks in one call: compare-and-pexpire.
-- KEYS[i] lock key; ARGV[1] lease ms; ARGV[i + 1] owner token of KEYS[i].
-- Reply an array: 1 where the key still holds the token (TTL reset), else 0.
-- The TTL is set, where the hash locks only raise it (lock/renew.lua): a
-- simple lock has one hold, so no other hold can need a longer TTL.
-- pcall: a key replaced by another type counts as lost instead of failing the batch.
-- Reads first, then the PEXPIREs, each after the first checked before any
-- (checked_calls.lua.part): the ACL may refuse one key and not another.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/pexpire_all.lua.part
local renewed, renewing = {}, {}
for i = 1, #KEYS do
    if redis.pcall('get', KEYS[i]) == ARGV[i + 1] then
        renewing[#renewing + 1] = KEYS[i]
        renewed[i] = 1
    else
        renewed[i] = 0
    end
end
return pexpire_all(renewing, ARGV[1], 'renewing the lock') or renewed
