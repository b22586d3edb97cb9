-- Reentrant lock acquire (Redisson RLock layout).
-- KEYS[1] lock hash; ARGV[1] lease ms; ARGV[2] owner id; ARGV[3] channel,
-- ARGV[4] publish command (publish or spublish; empty: the spin lock, which
-- announces nothing); for targeted wake-ups (handoff.lua.part), ARGV[5] the
-- caller's waiter id (empty: it will not wait, so it is not listed), ARGV[6]
-- the waiters `holdfast_lock_waiters:{name}` and ARGV[7] the promise
-- `holdfast_lock_handoff:{name}` (both empty: none).
-- Reply nil when taken (or re-entered), else ms to wait: the holder's
-- remaining PTTL, or what is left of a promise to another waiter; a NOPERM
-- error, nothing taken, when the user could not release it.
-- include: ../primitive/release_rights.lua.part
local waiters_key, promise_key = ARGV[6] or '', ARGV[7] or ''
-- include: handoff.lua.part
local refused = checks_rights and refused_right({{'hget', KEYS[1], ARGV[2]}, {'del', KEYS[1]}, {ARGV[4], ARGV[3], '0'}},
    'releasing the lock')
if refused then
    return refused
end
local waiter = ARGV[5] or ''
if redis.call('exists', KEYS[1]) == 0 then
    local promised_for = promise_holds_off(waiter)
    if promised_for then
        list_waiter(waiter)
        return promised_for
    end
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    unlist_waiter(waiter)
    return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
list_waiter(waiter)
return redis.call('pttl', KEYS[1])
