#!lua flags=no-writes
-- What a set of a group's values looks like now (docs/redisson-layout.md,
-- "Group lock"). KEYS[1] the group's hash; ARGV[1] `<fields>:<owner>`
-- (hold.lua.part; an empty owner asks only the first question).
-- Reply {locked, holds}: locked 1 when some value of the set is held by
-- anyone whose expire time has not passed; holds, the least hold count over
-- the set's values when the owner holds every one of them, else 0.
-- include: hold.lua.part
local fields, owner = parse_hold(ARGV[1])
if fields == nil then
    return bad_hold()
end
local now = server_now()
local locked, holds = 0, nil
for _, field in ipairs(fields) do
    local holder = redis.call('hget', KEYS[1], field)
    local expires = holder and tonumber(redis.call('hget', KEYS[1], expire_field(field, holder)))
    local live = expires and expires >= now
    if live then
        locked = 1
    end
    if holder == owner and live and holds ~= 0 then
        local count = tonumber(redis.call('hget', KEYS[1], count_field(field, owner))) or 0
        holds = math.min(holds or count, count)
    else
        holds = 0
    end
end
return {locked, holds or 0}
