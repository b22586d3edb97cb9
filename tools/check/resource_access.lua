-- The shared resource of holdfast-check, one per lock: a counter, the set of
-- holds that wrote it, and the log of every operation it accepted, in order.
-- KEYS[1] counter, KEYS[2] writers (set), KEYS[3] highest token seen, KEYS[4] log (list).
-- ARGV[1] 'r' (read), 'w' (write) or 'a' (add the hold to the set only, for
-- a semaphore's holders, of whom several may be in at once); ARGV[2] hold id; ARGV[3] fencing token (-1: none);
-- ARGV[4] '1' to refuse a token below the highest seen (reads too, so that a
-- read-modify-write by a superseded holder cannot overwrite a newer one);
-- ARGV[5] the value to write.
-- Reply {1, value} when accepted (the value read or written; the set's size
-- for 'a'), {0, highest token} when refused.
local token = tonumber(ARGV[3])
if ARGV[4] == '1' then
    local highest = tonumber(redis.call('get', KEYS[3]) or '-1')
    if token < highest then
        return {0, highest}
    end
    redis.call('set', KEYS[3], ARGV[3])
end
local value
if ARGV[1] == 'w' then
    value = ARGV[5]
    redis.call('set', KEYS[1], value)
    redis.call('sadd', KEYS[2], ARGV[2])
elseif ARGV[1] == 'a' then
    redis.call('sadd', KEYS[2], ARGV[2])
    value = redis.call('scard', KEYS[2])
else
    value = redis.call('get', KEYS[1]) or '0'
end
redis.call('rpush', KEYS[4], ARGV[1] .. ' ' .. ARGV[2] .. ' ' .. ARGV[3] .. ' ' .. value)
return {1, tonumber(value)}
