-- Watchdog renewal of read holds, many locks in one call.
-- KEYS[i] lock hash; ARGV[1] lease ms; ARGV[i + 1] owner id of KEYS[i].
-- Resets the TTL of each of the owner's read-hold keys (read_hold.lua.part)
-- to the lease, and raises the hash's TTL to at least the lease (never lowers
-- it: a writer or another reader may need more).
-- Only the owner's own holds: a dead reader's keys are left to expire.
-- Reply an array: 1 where the owner still holds reads, else 0.
-- pcall: a key replaced by another type counts as lost instead of failing the batch.
-- Reads first, then the PEXPIREs, each after the first checked before any
-- (checked_calls.lua.part): the ACL may refuse one key and not another.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/checked_lists.lua.part
-- include: read_hold.lua.part
local renewed, calls = {}, {}
for i = 1, #KEYS do
    local holds = tonumber(redis.pcall('hget', KEYS[i], ARGV[i + 1]))
    if holds ~= nil then
        for n = 1, holds do
            calls[#calls + 1] = {'pexpire', read_hold_key(KEYS[i], ARGV[i + 1], n), ARGV[1]}
        end
        if redis.call('pttl', KEYS[i]) < tonumber(ARGV[1]) then
            calls[#calls + 1] = {'pexpire', KEYS[i], ARGV[1]}
        end
        renewed[i] = 1
    else
        renewed[i] = 0
    end
end
return run_calls(calls, 'renewing the read lock') or renewed
