#!lua flags=allow-oom
-- Semaphore release and add-permits (Redisson RSemaphore layout).
-- KEYS[1] free permits; ARGV[1] permits to add (release: > 0; add-permits:
-- either sign), ARGV[2] publish command, ARGV[3] channel (no key, as in
-- lock/release.lua).
-- Publishes the new count when permits are free: a waiter reading it wakes
-- that many of its waiters. (Redisson publishes even a count <= 0; a Java
-- peer would hand that to Semaphore.release, which refuses a negative.)
-- Reply: the new count.
-- allow-oom: a release must work on a full server (maxmemory, noeviction).
-- Publish before the write: a user whose ACL refuses the channel gets the
-- error with the count unchanged (waiters see the message after the script).
-- include: ../primitive/release_rights.lua.part
local refused = checks_rights and refused_right({{ARGV[2], ARGV[3], '1'}}, 'releasing permits')
if refused then
    return refused
end
local free = redis.call('get', KEYS[1])
if free and not string.match(free, '^-?%d+$') then
    return redis.error_reply('WRONGTYPE the key holds a string that is not a count')
end
-- As exact as INCRBY's reply in Lua (a double), which is what was published before.
local after = tonumber(free or 0) + tonumber(ARGV[1])
if after > 0 then
    redis.call(ARGV[2], ARGV[3], after)
end
return redis.call('incrby', KEYS[1], ARGV[1])
