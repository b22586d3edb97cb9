#!lua flags=allow-oom
-- Force unlock of a set of a group's values, whoever holds them
-- (docs/redisson-layout.md, "Group lock"). KEYS[1] the group's hash; ARGV[1]
-- unlock message, ARGV[2] publish command (empty: none), ARGV[3] channel,
-- ARGV[4] the set `<fields>:` (hold.lua.part; no owner).
-- Reply 1 when some value was held (its fields deleted, waiters woken), else 0.
-- Reads first, the checks, the publish, then the one HDEL.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: hold.lua.part
local fields = parse_hold(ARGV[4])
if fields == nil then
    return bad_hold()
end
local refused = checks_rights and refused_right({{'hdel', KEYS[1], 'f'}, {ARGV[2], ARGV[3], ARGV[1]}},
    'force-unlocking the group lock')
if refused then
    return refused
end
local gone = {}
for _, field in ipairs(fields) do
    local holder = redis.call('hget', KEYS[1], field)
    if holder then
        gone[#gone + 1] = field
        gone[#gone + 1] = expire_field(field, holder)
        gone[#gone + 1] = count_field(field, holder)
    end
end
if #gone == 0 then
    return 0
end
if ARGV[2] ~= '' then
    if not redis.acl_check_cmd('hdel', KEYS[1], 'f') then
        return refusal('hdel', KEYS[1], 'force-unlocking the group lock')
    end
    redis.call(ARGV[2], ARGV[3], ARGV[1])
end
redis.call('hdel', KEYS[1], unpack(gone))
return 1
