-- Semaphore acquire (Redisson RSemaphore layout).
-- KEYS[1] free permits (a string); ARGV[1] permits wanted (> 0), ARGV[2]
-- publish command, ARGV[3] channel (for the release's rights; the order of
-- release.lua's arguments).
-- Reply 1: taken (DECRBY); 0: fewer are free, or no count was ever set; a
-- NOPERM error, nothing taken, when the user could not give permits back.
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
if free and tonumber(free) >= tonumber(ARGV[1]) then
    redis.call('decrby', KEYS[1], ARGV[1])
    return 1
end
return 0
