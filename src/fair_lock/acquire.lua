-- Fair lock acquire (Redisson RFairLock layout, and its deadline arithmetic).
-- KEYS[1] lock hash, KEYS[2] queue `redisson_lock_queue:{name}`, KEYS[3]
-- deadlines `redisson_lock_timeout:{name}`, KEYS[4] holdfast's liveness hash
-- `holdfast_fair_alive:{name}`; ARGV[1] lease ms, ARGV[2] owner, ARGV[3] queue
-- budget ms, ARGV[4] now (epoch ms), ARGV[5] 'try' (never queue) or 'wait',
-- ARGV[6] publish command, ARGV[7] liveness ms, ARGV[8] channel prefix
-- `redisson_lock__channel:{name}` (a waiter's channel is prefix:<owner>; no
-- key, as in lock/release.lua).
-- Reply nil when taken; else ms to sleep before trying again ('try': 1); a
-- NOPERM error, nothing taken, when the user could not release it.
--
-- Deadlines are Redisson's, chained: a waiter joins with the last waiter's
-- deadline (or the lock's TTL) plus its budget; whoever takes the lock lowers
-- every other deadline by its own budget. A head whose deadline passed is
-- presumed dead. Beside that, a holdfast waiter records in KEYS[4] (server
-- clock) until when it is alive; each retry moves it on, and a head whose
-- record ran out is dead too: a killed holdfast waiter stalls the queue for
-- seconds, not for its deadline's minutes.
-- Reads first, the one PUBLISH next, writes last: a refused command (ACL,
-- out of memory) leaves nothing half done.
local owner, budget, now = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
-- include: ../primitive/release_rights.lua.part
local refused = checks_rights and refused_right({{'del', KEYS[1]}, {ARGV[6], ARGV[8] .. ':' .. owner, '0'}},
    'releasing the fair lock')
if refused then
    return refused
end
-- include: dead_heads.lua.part
local head, dead = first_live(owner)

local free = redis.call('exists', KEYS[1]) == 0
if free and (head == false or head == owner) then
    redis.call('hset', KEYS[1], owner, 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    drop_dead(dead)
    if head == owner then redis.call('lpop', KEYS[2]) end
    redis.call('zrem', KEYS[3], owner)
    redis.call('hdel', KEYS[4], owner)
    for _, waiter in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do
        redis.call('zincrby', KEYS[3], -budget, waiter)
    end
    return nil
end
if redis.call('hexists', KEYS[1], owner) == 1 then
    redis.call('hincrby', KEYS[1], owner, 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    drop_dead(dead)
    return nil
end
-- The new head was woken by no one if the ones before it were dead.
if free and dead > 0 then
    redis.call(ARGV[6], ARGV[8] .. ':' .. head, '0')
end
drop_dead(dead)
if ARGV[5] == 'try' then
    return 1
end

if redis.call('zscore', KEYS[3], owner) == false then
    local last = redis.call('lindex', KEYS[2], -1)
    local ttl
    if last ~= false and last ~= owner and redis.call('zscore', KEYS[3], last) ~= false then
        ttl = tonumber(redis.call('zscore', KEYS[3], last)) - now
    else
        ttl = redis.call('pttl', KEYS[1])
    end
    if redis.call('zadd', KEYS[3], ttl + budget + now, owner) == 1 then
        redis.call('rpush', KEYS[2], owner)
    end
end
local liveness = tonumber(ARGV[7])
redis.call('hset', KEYS[4], owner, server_now + liveness)
-- The records must outlast every deadline in the queue (past it, Redisson's
-- rule drops a waiter anyway); deadlines only ever go down.
local last_deadline = redis.call('zrange', KEYS[3], -1, -1, 'withscores')[2]
local keep = liveness
if last_deadline then keep = math.max(keep, tonumber(last_deadline) - now + liveness) end
redis.call('pexpire', KEYS[4], math.floor(keep))

if not free then
    local pttl = redis.call('pttl', KEYS[1])
    if pttl >= 0 then return pttl end
    return liveness
end
-- Free, but another waiter is first: it was woken; ask again when it would be presumed dead.
local wait = liveness
local deadline = redis.call('zscore', KEYS[3], head)
if deadline ~= false then wait = math.min(wait, tonumber(deadline) - now) end
local alive = redis.call('hget', KEYS[4], head)
if alive ~= false then wait = math.min(wait, tonumber(alive) - server_now) end
return math.max(0, wait)
