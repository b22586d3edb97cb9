#!lua flags=allow-oom
-- Semaphore release and add-permits (Redisson RSemaphore layout).
-- KEYS[1] free permits; ARGV[1] permits to add (release: > 0; add-permits:
-- either sign), ARGV[2] publish command, ARGV[3] channel (no key, as in
-- lock/release.lua), ARGV[4] 'existing' to add only to a count that exists
-- (release-if-exists: nil, nothing changed, when there is none).
-- Publishes the new count when permits are free: a waiter reading it wakes
-- that many of its waiters. (Redisson publishes even a count <= 0; a Java
-- peer would hand that to Semaphore.release, which refuses a negative.)
-- Reply: the new count; OVERFLOW (nothing changed) past Redis's 64-bit range.
-- allow-oom: a release must work on a full server (maxmemory, noeviction).
-- Publish before the write: a user whose ACL refuses the channel gets the
-- error with the count unchanged (waiters see the message after the script);
-- the INCRBY after the publish is checked before it (checked_calls.lua.part).
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: ../primitive/stored_count.lua.part
local refused = checks_rights and refused_right({{ARGV[2], ARGV[3], '1'}}, 'releasing permits')
if refused then
    return refused
end
local free, wrong_type = stored_count(KEYS[1])
if wrong_type then
    return wrong_type
end
if not free and ARGV[4] == 'existing' then
    return nil
end
-- Redis counts in 64 bits, more than Lua's numbers (doubles) hold exactly:
-- a count is split at 10^9, high * 10^9 + low, low in [0, 10^9).
local function split(count)
    local sign, digits = string.match(count, '^(-?)(%d+)$')
    local high, low = tonumber(string.sub(digits, 1, -10)) or 0, tonumber(string.sub(digits, -9))
    if sign == '-' and low > 0 then
        return -high - 1, 1e9 - low
    end
    return sign == '-' and -high or high, low
end
-- Past 9223372036854775807 (9223372036 * 10^9 + 854775807) or -9223372036854775808.
local function outside(high, low)
    return high > 9223372036 or (high == 9223372036 and low > 854775807) or high < -9223372037 or
        (high == -9223372037 and low < 145224192)
end
local high, low = split(free or '0')
if outside(high, low) then
    return not_a_count
end
local add_high, add_low = split(ARGV[1])
low = low + add_low
if outside(high + add_high + math.floor(low / 1e9), low % 1e9) then
    -- INCRBY would refuse it with a bare ERR: OVERFLOW is the code callers tell it by.
    return redis.error_reply('OVERFLOW the count would overflow')
end
-- As exact as INCRBY's reply in Lua (a double), which is what was published before.
local after = tonumber(free or 0) + tonumber(ARGV[1])
if after > 0 then
    if not redis.acl_check_cmd('incrby', KEYS[1], ARGV[1]) then
        return refusal('incrby', KEYS[1], 'releasing permits')
    end
    redis.call(ARGV[2], ARGV[3], after)
end
return redis.call('incrby', KEYS[1], ARGV[1])
