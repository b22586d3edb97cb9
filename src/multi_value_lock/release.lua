#!lua flags=allow-oom
-- Group lock release: one hold of a set of values (docs/redisson-layout.md,
-- "Group lock"). KEYS[1] the group's hash; ARGV[1] unlock message, ARGV[2]
-- lease ms to raise the expire times of values still held to (0: keep them,
-- an explicit lease), ARGV[3] the hold `<fields>:<owner>` (hold.lua.part),
-- ARGV[4] publish command, ARGV[5] channel (no key, as in lock/release.lua);
-- what the owner keeps, as its client's callers know it: ARGV[6] the holds of
-- this set after this release, ARGV[6 + i] per field i of the hold, the
-- owner's holds of that value in all its sets of the group.
-- Each value of the set the owner holds (its expire time not past) gives one
-- hold back, and the holds beyond what the owner keeps go too (a set whose
-- release was refused, re-entered by this one: nobody believes in it any
-- more, as in a Lock's last release); a value whose count reaches 0 is freed,
-- and its fields go. A count is never raised.
-- Reply nil: some value of the set was not the owner's (the rest still given
-- back); 0: the set is still held (the owner keeps holds of it); 1: this hold
-- ended (its values freed, or kept for the owner's other sets).
-- A release that frees a value publishes `1`: every waiter of the group
-- tries, as a freed value may be what waiters of different sets wait for.
-- allow-oom: a release must work on a full server (maxmemory, noeviction).
-- Reads first, the checks, the publish, then the writes: a refused call
-- (ACL) leaves the hash as it was.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/checked_lists.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: hold.lua.part
local fields, owner = parse_hold(ARGV[3])
if fields == nil then
    return bad_hold()
end
if #ARGV ~= 6 + #fields then
    return redis.error_reply('ERR holdfast: a group lock release needs the holds kept of the set and of each value')
end
local refused = checks_rights and refused_right({{'hdel', KEYS[1], 'f'}, {'hset', KEYS[1], 'f', 'v'},
    {'pexpire', KEYS[1], '1'}, {ARGV[4], ARGV[5], ARGV[1]}}, 'releasing the group lock')
if refused then
    return refused
end
local lease, now = tonumber(ARGV[2]), server_now()
local until_ms = now + lease
local own = tonumber(ARGV[6])
local freed, kept, left, raise, lost = {}, {}, {}, {}, false
for i, field in ipairs(fields) do
    local holder = redis.call('hget', KEYS[1], field)
    local expires = tonumber(redis.call('hget', KEYS[1], expire_field(field, owner)))
    local count = tonumber(redis.call('hget', KEYS[1], count_field(field, owner)))
    local keeps = count and math.min(count - 1, tonumber(ARGV[6 + i]))
    if holder ~= owner or expires == nil or expires < now or count == nil then
        lost = true
    elseif keeps <= 0 then
        freed[#freed + 1] = field
    else
        kept[#kept + 1] = field
        left[#kept] = keeps
        if lease > 0 and expires < until_ms then
            raise[#raise + 1] = field
        end
    end
end
if #freed == 0 and #kept == 0 then
    return nil
end
local pttl = redis.call('pttl', KEYS[1])
local raise_ttl = #kept > 0 and lease > 0 and pttl < lease
local publishes = #freed > 0 and ARGV[4] ~= ''
-- What runs after the first write or publish, checked before it.
local refused_write = refused_call({{#freed > 0 and 'hdel' or '', KEYS[1], 'f'},
    {#kept > 0 and 'hset' or '', KEYS[1], 'f', 'v'}, {raise_ttl and 'pexpire' or '', KEYS[1], lease}},
    'releasing the group lock')
if refused_write then
    return refused_write
end
if publishes then
    redis.call(ARGV[4], ARGV[5], ARGV[1])
end
for _, field in ipairs(freed) do
    redis.call('hdel', KEYS[1], field, expire_field(field, owner), count_field(field, owner))
end
for i, field in ipairs(kept) do
    redis.call('hset', KEYS[1], count_field(field, owner), left[i])
end
for _, field in ipairs(raise) do
    redis.call('hset', KEYS[1], expire_field(field, owner), until_ms)
end
if raise_ttl then
    redis.call('pexpire', KEYS[1], lease)
end
if lost then
    return nil
end
return (#freed == 0 and own > 0) and 0 or 1
