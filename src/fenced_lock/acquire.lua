-- Fenced lock acquire (Redisson RFencedLock layout): the RLock acquire plus a
-- token raised on every acquisition, re-entries included.
-- KEYS[1] lock hash, KEYS[2] token counter; ARGV[1] lease ms; ARGV[2] owner id;
-- ARGV[3] channel, ARGV[4] publish command (for the release's rights).
-- Reply {-1, token} when taken, {pttl, -1} when not; a NOPERM error, nothing
-- taken, when the user could not release it (as lock/acquire.lua).
--
-- The token is max(counter + 1, the server's clock in microseconds), not a
-- plain INCR: a failover (or a restart without persistence) can lose the
-- latest tokens with the counter, and a bare INCR would then hand them out
-- again. The clock of whichever master answers has moved on by the time a
-- failover completes, so tokens never repeat or go back as long as the
-- masters' clocks differ by less than a failover takes (docs/design.md).
-- Lua numbers are doubles: tokens count exactly up to 2^53 (year 2255 in
-- microseconds), as RFencedLock's INCR through Lua does.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/release_rights.lua.part
local refused = checks_rights and refused_right({{'hget', KEYS[1], ARGV[2]}, {'del', KEYS[1]}, {ARGV[4], ARGV[3], '0'}},
    'releasing the lock')
if refused then
    return refused
end
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    -- The token is written first: the lock's two calls are checked before it
    -- (checked_calls.lua.part), so a refusal leaves no token spent.
    if not redis.acl_check_cmd('hincrby', KEYS[1], ARGV[2], 1) then
        return refusal('hincrby', KEYS[1], 'taking the lock')
    elseif not redis.acl_check_cmd('pexpire', KEYS[1], ARGV[1]) then
        return refusal('pexpire', KEYS[1], 'taking the lock')
    end
    local time = redis.call('time')
    local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
    local counter = tonumber(redis.call('get', KEYS[2]) or '0')
    local token
    if counter == nil or counter >= now_us then
        token = redis.call('incr', KEYS[2])  -- exact, and Redis's own error for a non-number
    else
        token = now_us
        redis.call('set', KEYS[2], string.format('%.0f', now_us))
    end
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {-1, token}
end
return {redis.call('pttl', KEYS[1]), -1}
