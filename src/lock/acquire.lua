-- Reentrant lock acquire (Redisson RLock layout).
-- KEYS[1] lock hash; ARGV[1] lease ms; ARGV[2] owner id; ARGV[3] channel,
-- ARGV[4] publish command (publish or spublish; empty: the spin lock, which
-- announces nothing); for targeted wake-ups (handoff.lua.part), ARGV[5] the
-- caller's waiter id (empty: not listed, as a caller that will not wait, or
-- a first attempt: the waiter lists itself from its attempt once subscribed),
-- ARGV[6] the waiters `holdfast_lock_waiters:{name}` and ARGV[7] the promise
-- `holdfast_lock_handoff:{name}` (both empty: none), ARGV[8] '1' on a
-- cluster, where the lock's slot may migrate.
-- Reply nil when taken (or re-entered), else ms to wait: the holder's
-- remaining PTTL, or what is left of a promise to another waiter; a NOPERM
-- error, nothing taken, when the user could not release it, or could not
-- set the lock's expiry (checked before the HINCRBY: refused after it, the
-- hash would stay without one).
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/release_rights.lua.part
local waiters_key, promise_key, slot_moves = ARGV[6] or '', ARGV[7] or '', ARGV[8] == '1'
-- include: handoff.lua.part
local refused = checks_rights and refused_right({{'hget', KEYS[1], ARGV[2]}, {'del', KEYS[1]}, {ARGV[4], ARGV[3], '0'}},
    'releasing the lock')
if refused then
    return refused
end
-- Takes or re-enters the lock: nil, or the refusal, with nothing written.
local function take()
    if not redis.acl_check_cmd('pexpire', KEYS[1], ARGV[1]) then
        return refusal('pexpire', KEYS[1], 'taking the lock')
    end
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
local waiter = targeted and ARGV[5] or ''
if waiter ~= '' then
    -- A listed waiter, most often the one a release just named: the promise
    -- and the lock, two calls that also tell its refusal.
    local promised = side('get', promise_key)  -- false: none; nil: unreadable, as none
    local free = redis.call('exists', KEYS[1]) == 0
    if free and (not promised or promised == waiter) or not free and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
        local not_taken = take()
        if not_taken then
            return not_taken
        end
        if free and promised then
            side('del', promise_key)  -- the release that named it took it off the list
        else
            side('zrem', waiters_key, waiter)
        end
        return nil
    end
    local wait
    if free then
        wait = math.max(1, side('pttl', promise_key) or 1)  -- promised to another
    else
        wait = redis.call('pttl', KEYS[1])
    end
    -- Listed or not (out of memory), the caller is refused the same way.
    local now = side('time')
    if now and (not slot_moves or side('exists', KEYS[1], waiters_key)) then
        side('zadd', waiters_key, 'NX', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000), waiter)
        side('pexpire', waiters_key, waiters_kept_ms)
    end
    return wait
end
-- One call on the common path: the lock free and promised to no one.
local present = targeted and side('exists', KEYS[1], promise_key)
if not present then
    targeted = false
    present = redis.call('exists', KEYS[1])
end
-- Free and promised to no one, or re-entered.
if present == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    return take()
end
-- One of the two is there: a promise of the free lock, when GET finds it.
if targeted and present == 1 then
    local promised = side('get', promise_key)
    if promised then
        return math.max(1, side('pttl', promise_key) or 1)
    end
    -- Unreadable: as if there were none.
    if promised == nil and redis.call('exists', KEYS[1]) == 0 then
        return take()
    end
end
return redis.call('pttl', KEYS[1])
