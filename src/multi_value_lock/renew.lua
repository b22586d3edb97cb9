-- Watchdog renewal of group lock holds (docs/redisson-layout.md, "Group lock").
-- KEYS[i] a group's hash; ARGV[1] lease ms; ARGV[i + 1] the hold
-- `<fields>:<owner>` of KEYS[i] (hold.lua.part).
-- Reply an array: 1 where the owner still holds every value of its set
-- (its expire times and the hash's TTL then at least now + lease), else 0,
-- and that hold is left as it was: a renewal is all of a set or none.
-- Reads first, every write checked next, the writes last: a refusal (ACL)
-- renews nothing. pcall: a key of another type counts as lost.
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/checked_lists.lua.part
-- include: hold.lua.part
local lease, now = tonumber(ARGV[1]), server_now()
local until_ms = now + lease
local renewed, raise, checks = {}, {}, {}
for i = 1, #KEYS do
    local fields, owner = parse_hold(ARGV[i + 1])
    local held = fields ~= nil
    local mine = {}
    for _, field in ipairs(fields or {}) do
        local holder = redis.pcall('hget', KEYS[i], field)
        local expires = holder == owner and tonumber(redis.call('hget', KEYS[i], expire_field(field, owner)))
        if not expires or expires < now then
            held = false
            break
        end
        if expires < until_ms then
            mine[#mine + 1] = expire_field(field, owner)
        end
    end
    renewed[i] = held and 1 or 0
    if held then
        local pttl = redis.call('pttl', KEYS[i])
        raise[#raise + 1] = {KEYS[i], mine, pttl < lease}
        checks[#checks + 1] = {#mine > 0 and 'hset' or '', KEYS[i], 'f', 'v'}
        checks[#checks + 1] = {pttl < lease and 'pexpire' or '', KEYS[i], lease}
    end
end
local refused = refused_call(checks, 'renewing the group lock')
if refused then
    return refused
end
for _, hold in ipairs(raise) do
    for _, expires in ipairs(hold[2]) do
        redis.call('hset', hold[1], expires, until_ms)
    end
    if hold[3] then
        redis.call('pexpire', hold[1], lease)
    end
end
return renewed
