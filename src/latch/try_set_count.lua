-- Count-down latch set-count-if-absent (Redisson RCountDownLatch layout).
-- KEYS[1] count; ARGV[1] message (`1`), ARGV[2] count (> 0), ARGV[3] publish
-- command, ARGV[4] channel (no key, as in lock/release.lua).
-- Reply 1: set, and `1` published; 0: the latch has a count already.
-- A key of another type, or a string that is no count, is refused (WRONGTYPE)
-- as by count_down.lua, not taken for an existing count.
-- Publish before the SET, checked before it (checked_calls.lua.part): a
-- refused PUBLISH or SET (ACL) sets nothing.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: ../primitive/stored_count.lua.part
local refused = checks_rights and refused_right({{ARGV[3], ARGV[4], ARGV[1]}}, 'setting the count')
if refused then
    return refused
end
local count, wrong_type = stored_count(KEYS[1])
if wrong_type then
    return wrong_type
end
if count then
    return 0
end
if not redis.acl_check_cmd('set', KEYS[1], ARGV[2]) then
    return refusal('set', KEYS[1], 'setting the count')
end
redis.call(ARGV[3], ARGV[4], ARGV[1])
redis.call('set', KEYS[1], ARGV[2])
return 1
