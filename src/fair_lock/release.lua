-- Fair lock release: as the RLock's, but the message goes only to the first
-- waiter's own channel (prefix:<owner>), after dropping dead queue heads.
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] deadlines, KEYS[4] channel prefix;
-- ARGV[1] unlock message, ARGV[2] lease ms to reset a still-held lock to (0:
-- keep its TTL), ARGV[3] owner, ARGV[4] now (epoch ms), ARGV[5] publish command.
-- Reply nil: not the owner; 0: still held; 1: released (and the head woken).
local now = tonumber(ARGV[4])
while true do
    local head = redis.call('lindex', KEYS[2], 0)
    if head == false then break end
    local deadline = tonumber(redis.call('zscore', KEYS[3], head))
    if deadline ~= nil and deadline > now then break end
    redis.call('zrem', KEYS[3], head)
    redis.call('lpop', KEYS[2])
end

if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return nil
end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
    if tonumber(ARGV[2]) > 0 then
        redis.call('pexpire', KEYS[1], ARGV[2])
    end
    return 0
end
redis.call('del', KEYS[1])
local head = redis.call('lindex', KEYS[2], 0)
if head ~= false then
    redis.call(ARGV[5], KEYS[4] .. ':' .. head, ARGV[1])
end
return 1
