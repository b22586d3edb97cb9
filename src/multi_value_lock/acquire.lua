-- Group lock acquire (Redisson's RedissonFasterMultiLock): every value of
-- the set, or none (docs/redisson-layout.md, "Group lock").
-- KEYS[1] the group's hash; ARGV[1] lease ms, ARGV[2] the hold
-- `<fields>:<owner>` (hold.lua.part), ARGV[3] publish command and ARGV[4]
-- channel (the release's rights, checked first).
-- Reply nil when every value was taken (or re-entered); else, with nothing
-- written, the ms until the last expire time of the other owners holding a
-- value of the set. A value whose holder's expire time passed (or is
-- missing) is free: its stale fields go as it is taken.
-- Reads first, then the checks of every write, then the writes: a refusal
-- (ACL) leaves the hash as it was.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/checked_lists.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: hold.lua.part
local fields, owner = parse_hold(ARGV[2])
if fields == nil then
    return bad_hold()
end
local refused = checks_rights and refused_right({{'hdel', KEYS[1], 'f'}, {ARGV[3], ARGV[4], '1'}},
    'releasing the group lock')
if refused then
    return refused
end
local lease, now = tonumber(ARGV[1]), server_now()
local until_ms = now + lease
local latest, stale, raise = nil, {}, {}
for _, field in ipairs(fields) do
    local holder = redis.call('hget', KEYS[1], field)
    local expires = holder and tonumber(redis.call('hget', KEYS[1], expire_field(field, holder)))
    if holder and expires and expires > now then
        if holder ~= owner then
            latest = math.max(latest or expires, expires)
        elseif expires < until_ms then
            raise[#raise + 1] = field
        end
    else
        -- Free: no holder, or a hold that ended (this owner's own included).
        if holder then
            stale[#stale + 1] = expire_field(field, holder)
            stale[#stale + 1] = count_field(field, holder)
        end
        raise[#raise + 1] = field
    end
end
if latest then
    return latest - now
end
local pttl = redis.call('pttl', KEYS[1])
local refused_write = refused_call({{'hset', KEYS[1], 'f', 'v'}, {'hincrby', KEYS[1], 'f', '1'},
    {#stale > 0 and 'hdel' or '', KEYS[1], 'f'}, {pttl < lease and 'pexpire' or '', KEYS[1], lease}},
    'taking the group lock')
if refused_write then
    return refused_write
end
if #stale > 0 then
    redis.call('hdel', KEYS[1], unpack(stale))
end
for _, field in ipairs(raise) do
    redis.call('hset', KEYS[1], expire_field(field, owner), until_ms)
end
for _, field in ipairs(fields) do
    redis.call('hset', KEYS[1], field, owner)
    redis.call('hincrby', KEYS[1], count_field(field, owner), 1)
end
-- Raised, never lowered: another hold in the hash may need more.
if pttl < lease then
    redis.call('pexpire', KEYS[1], lease)
end
return nil
