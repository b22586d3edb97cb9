-- The witness's read of one lock (tools/check/witness.cpp), in one step, so
-- that what it reports together was true together: a semaphore's free
-- permits and the permits it lists as held add up at one instant.
-- KEYS[1] the lock's key; KEYS[2] a permit-expirable semaphore's held ids
-- ({name}:timeout, a ZSET; absent for other primitives). ARGV[1] `group`
-- when KEYS[1] is a group lock's hash (MultiValueLock), else empty.
-- Reply: {type of KEYS[1], its PTTL, its value as a count (a string's;
-- -1 for another type), ZCARD of KEYS[2], then a hash's fields but `mode`;
-- a group's hash: the server's time in epoch ms, then its fields and values
-- as HGETALL lists them (group_layout.cpp reads its holders from them)}.
local kind = redis.call('type', KEYS[1])['ok']
local reply = {kind, redis.call('pttl', KEYS[1]), -1, redis.call('zcard', KEYS[2])}
if kind == 'string' then
    reply[3] = tonumber(redis.call('get', KEYS[1])) or -1
elseif kind == 'hash' and ARGV[1] == 'group' then
    local time = redis.call('time')
    reply[#reply + 1] = tostring(tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000))
    for _, item in ipairs(redis.call('hgetall', KEYS[1])) do
        reply[#reply + 1] = item
    end
elseif kind == 'hash' then
    for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
        if field ~= 'mode' then
            reply[#reply + 1] = field
        end
    end
end
return reply
