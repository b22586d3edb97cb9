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
-- (checked_calls.lua.part): the ACL may refuse one key and not another.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/pexpire_all.lua.part
local renewed, raised = {}, {}
for i = 1, #KEYS do
    if redis.pcall('hexists', KEYS[i], ARGV[i + 1]) == 1 then
        if redis.call('pttl', KEYS[i]) < tonumber(ARGV[1]) then
            raised[#raised + 1] = KEYS[i]
        end
        renewed[i] = 1
    else
        renewed[i] = 0
    end
end
return pexpire_all(raised, ARGV[1], 'renewing the lock') or renewed
