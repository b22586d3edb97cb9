-- Semaphore set-permits-if-absent (Redisson RSemaphore layout).
-- KEYS[1] free permits; ARGV[1] permits (>= 0), ARGV[2] publish command,
-- ARGV[3] channel (no key, as in lock/release.lua), ARGV[4] the count's time
-- to live in ms ('0': none, it never expires).
-- Reply 1: set, and the count published; 0: a count exists already.
-- A key of another type, or a string that is no count, is refused (WRONGTYPE)
-- as by every semaphore script, not taken for an existing count.
-- Publish before the SET, checked before it (checked_calls.lua.part): a
-- refused PUBLISH or SET (ACL) sets nothing.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: ../primitive/stored_count.lua.part
local refused = checks_rights and refused_right({{ARGV[2], ARGV[3], ARGV[1]}}, 'setting the permits')
if refused then
    return refused
end
local free, wrong_type = stored_count(KEYS[1])
if wrong_type then
    return wrong_type
end
if free then
    return 0
end
local set = {'set', KEYS[1], ARGV[1]}
if ARGV[4] ~= '0' then
    set = {'set', KEYS[1], ARGV[1], 'px', ARGV[4]}
end
if not redis.acl_check_cmd(unpack(set)) then
    return refusal('set', KEYS[1], 'setting the permits')
end
redis.call(ARGV[2], ARGV[3], ARGV[1])
redis.call(unpack(set))
return 1
