-- Semaphore acquire (Redisson RSemaphore layout).
-- KEYS[1] free permits (a string); ARGV[1] permits wanted (> 0), ARGV[2]
-- channel, ARGV[3] publish command (for the release's rights).
-- Reply 1: taken (DECRBY); 0: fewer are free, or no count was ever set; a
-- NOPERM error, nothing taken, when the user could not give permits back.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/release_rights.lua.part
local refused = checks_rights and refused_right({{ARGV[3], ARGV[2], '1'}}, 'releasing permits')
if refused then
    return refused
end
local free = redis.call('get', KEYS[1])
if free and not string.match(free, '^-?%d+$') then
    return redis.error_reply('WRONGTYPE the key holds a string that is not a count')
end
if free and tonumber(free) >= tonumber(ARGV[1]) then
    redis.call('decrby', KEYS[1], ARGV[1])
    return 1
end
return 0
