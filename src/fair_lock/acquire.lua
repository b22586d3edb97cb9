-- Fair lock acquire (Redisson RFairLock layout: hash, queue list, deadline zset).
-- KEYS[1] lock hash, KEYS[2] queue `redisson_lock_queue:{name}`, KEYS[3]
-- deadlines `redisson_lock_timeout:{name}`, KEYS[4] channel prefix
-- `redisson_lock__channel:{name}` (a waiter's channel is prefix:<owner>);
-- ARGV[1] lease ms, ARGV[2] owner, ARGV[3] wait budget ms, ARGV[4] now (epoch
-- ms), ARGV[5] 'try' (never queue) or 'wait', ARGV[6] publish command.
-- Reply nil when taken; else ms to sleep before trying again ('try': 1).
--
-- Deadlines: a queue head whose deadline passed is presumed dead and dropped.
-- Redisson chains them (the previous waiter's deadline + budget) and never
-- refreshes them, so a dead waiter can stall the queue for long. A holdfast
-- waiter at position p keeps its own at now + (p + 1) * budget by retrying
-- every quarter budget: every handoff lowers it by one budget as it moves up,
-- and a dead holdfast waiter is dropped within one budget of its last retry.
local now = tonumber(ARGV[4])
local budget = tonumber(ARGV[3])
local dropped = false
while true do
    local head = redis.call('lindex', KEYS[2], 0)
    if head == false or head == ARGV[2] then break end
    local deadline = tonumber(redis.call('zscore', KEYS[3], head))
    if deadline ~= nil and deadline > now then break end
    redis.call('zrem', KEYS[3], head)
    redis.call('lpop', KEYS[2])
    dropped = true
end

local free = redis.call('exists', KEYS[1]) == 0
if free then
    local head = redis.call('lindex', KEYS[2], 0)
    if head == false or head == ARGV[2] then
        redis.call('lpop', KEYS[2])
        redis.call('zrem', KEYS[3], ARGV[2])
        for _, waiter in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do
            redis.call('zincrby', KEYS[3], -budget, waiter)
        end
        redis.call('hset', KEYS[1], ARGV[2], 1)
        redis.call('pexpire', KEYS[1], ARGV[1])
        return nil
    end
    -- The head was woken by no one if the one before it was dropped.
    if dropped then
        redis.call(ARGV[6], KEYS[4] .. ':' .. head, '0')
    end
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
if ARGV[5] == 'try' then
    return 1
end

local position = redis.call('lpos', KEYS[2], ARGV[2])
if position == false then
    position = redis.call('llen', KEYS[2])
    redis.call('rpush', KEYS[2], ARGV[2])
end
local deadline = now + (position + 1) * budget
local current = tonumber(redis.call('zscore', KEYS[3], ARGV[2]))
if current == nil or current < deadline then
    redis.call('zadd', KEYS[3], deadline, ARGV[2])
end
if not free then
    return math.max(0, redis.call('pttl', KEYS[1]))
end
-- Free but another waiter is first: it was woken; ask again when it would be dropped.
local head_deadline = tonumber(redis.call('zscore', KEYS[3], redis.call('lindex', KEYS[2], 0))) or now
return math.max(0, head_deadline - now)
