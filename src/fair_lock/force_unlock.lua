#!lua flags=allow-oom
-- Fair lock force unlock: delete the lock whoever holds it and wake the first
-- live waiter (dead heads are dropped first, as the release drops them).
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] deadlines, KEYS[4] channel prefix,
-- KEYS[5] liveness hash; ARGV[1] unlock message, ARGV[2] publish command,
-- ARGV[3] now (epoch ms). Reply 1 when a lock was deleted, else 0.
-- allow-oom, and the PUBLISH before any write, as in the release.
local now = tonumber(ARGV[3])
local clock = redis.call('time')
local server_now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

local function presumed_dead(waiter)
    local deadline = redis.call('zscore', KEYS[3], waiter)
    if deadline ~= false and tonumber(deadline) <= now then return true end
    local alive = redis.call('hget', KEYS[5], waiter)
    return alive ~= false and tonumber(alive) <= server_now
end

local dead = 0
local head = redis.call('lindex', KEYS[2], 0)
while head ~= false and presumed_dead(head) do
    dead = dead + 1
    head = redis.call('lindex', KEYS[2], dead)
end

-- HLEN, as lock/force_unlock.lua: a key of another type is no lock to delete
-- (WRONGTYPE, key kept).
local held = redis.call('hlen', KEYS[1]) > 0
if held and head ~= false then
    redis.call(ARGV[2], KEYS[4] .. ':' .. head, ARGV[1])
end
for _ = 1, dead do
    local gone = redis.call('lpop', KEYS[2])
    redis.call('zrem', KEYS[3], gone)
    redis.call('hdel', KEYS[5], gone)
end
if held then
    redis.call('del', KEYS[1])
    return 1
end
return 0
