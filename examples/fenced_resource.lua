-- A resource that refuses stale writers: a write carries its holder's fencing
-- token and is accepted only if no higher token has been seen. A holder that
-- was paused past its lease writes with an old token and is turned away.
-- KEYS[1] the guarded value, KEYS[2] the highest token seen;
-- ARGV[1] the writer's token, ARGV[2] the new value.
-- Reply 1: written; 0: refused, a later holder has written.
local highest = tonumber(redis.call('get', KEYS[2]) or '0')
local token = tonumber(ARGV[1])
if token < highest then
    return 0
end
redis.call('set', KEYS[2], ARGV[1])
redis.call('set', KEYS[1], ARGV[2])
return 1
