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
-- Reads first, the one PUBLISH next, writes last; every call after the
-- first write or publish is checked before it (checked_calls.lua.part): a
-- refused command (ACL, out of memory) leaves nothing half done.
local owner, budget, now = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
-- include: ../primitive/checked_calls.lua.part
-- include: ../primitive/checked_lists.lua.part
-- include: ../primitive/release_rights.lua.part
-- include: ../primitive/unlock_message.lua.part
local refused = checks_rights and refused_right({{'del', KEYS[1]}, {ARGV[6], ARGV[8] .. ':' .. owner, unlock_message}},
    'releasing the fair lock')
if refused then
    return refused
end
-- include: dead_heads.lua.part
local head, dead, gone = first_live(owner)

local free = redis.call('exists', KEYS[1]) == 0
if free and (head == false or head == owner) then
    -- Everyone left in the queue moves up by this owner's budget. Alone (no
    -- queue, no deadline), the lock is all there is to write.
    local deadlines = redis.call('zrange', KEYS[3], 0, -1)
    local alone = head == false and dead == 0 and #deadlines == 0
    local movers = {}
    for _, waiter in ipairs(deadlines) do
        if waiter ~= owner and not gone[waiter] then movers[#movers + 1] = waiter end
    end
    local calls = {{'pexpire', KEYS[1], ARGV[1]}}
    if not alone then
        dead_calls(dead, calls)
        calls[#calls + 1] = head == owner and {'lpop', KEYS[2]} or {''}
        calls[#calls + 1] = {'zrem', KEYS[3], owner}
        calls[#calls + 1] = {'hdel', KEYS[4], owner}
        calls[#calls + 1] = #movers > 0 and {'zincrby', KEYS[3], -budget, movers[1]} or {''}
    end
    local refused_take = refused_call(calls, 'taking the fair lock')
    if refused_take then
        return refused_take
    end
    redis.call('hset', KEYS[1], owner, 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    if alone then
        return nil
    end
    drop_dead(dead)
    if head == owner then redis.call('lpop', KEYS[2]) end
    redis.call('zrem', KEYS[3], owner)
    redis.call('hdel', KEYS[4], owner)
    for _, waiter in ipairs(movers) do
        redis.call('zincrby', KEYS[3], -budget, waiter)
    end
    return nil
end
if redis.call('hexists', KEYS[1], owner) == 1 then
    local refused_reentry = refused_call(dead_calls(dead, {{'pexpire', KEYS[1], ARGV[1]}}), 'taking the fair lock')
    if refused_reentry then
        return refused_reentry
    end
    redis.call('hincrby', KEYS[1], owner, 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    drop_dead(dead)
    return nil
end
-- The new head was woken by no one if the ones before it were dead (free
-- here, the head is another live waiter).
-- `calls`: what this path writes and publishes, in order, the first unchecked.
local wakes = free and dead > 0
local calls = dead_calls(dead, wakes and {{ARGV[6], ARGV[8] .. ':' .. head, unlock_message}} or {})
local waits = ARGV[5] ~= 'try'
local liveness = tonumber(ARGV[7])
local joining, deadline, keep, pttl, head_deadline, head_alive
if waits then
    -- What the writes below need, read before them. The dead are before the
    -- head, and this owner is no one's head here: dropping them or writing
    -- this owner's entries changes none of these reads but the last deadline.
    joining = redis.call('zscore', KEYS[3], owner) == false
    if joining then
        -- The last waiter once the dead are dropped: none if every one was dead.
        local last = head ~= false and redis.call('lindex', KEYS[2], -1) or false
        local last_deadline = last ~= false and last ~= owner and redis.call('zscore', KEYS[3], last)
        local ttl
        if last_deadline then
            ttl = tonumber(last_deadline) - now
        else
            ttl = redis.call('pttl', KEYS[1])
        end
        deadline = ttl + budget + now
        calls[#calls + 1] = {'zadd', KEYS[3], deadline, owner}
        calls[#calls + 1] = {'rpush', KEYS[2], owner}
    end
    -- The records must outlast every deadline in the queue (past it,
    -- Redisson's rule drops a waiter anyway); deadlines only ever go down.
    -- The latest of those left once the dead are dropped, and this owner's.
    local latest = deadline
    local top = redis.call('zrange', KEYS[3], -(dead + 1), -1, 'withscores')
    for i = #top - 1, 1, -2 do
        if not gone[top[i]] then
            latest = math.max(latest or tonumber(top[i + 1]), tonumber(top[i + 1]))
            break
        end
    end
    keep = liveness
    if latest then keep = math.max(keep, latest - now + liveness) end
    pttl = not free and redis.call('pttl', KEYS[1])
    -- Free, but another waiter is first: it was woken; ask again when it would be presumed dead.
    head_deadline = free and redis.call('zscore', KEYS[3], head)
    head_alive = free and redis.call('hget', KEYS[4], head)
    calls[#calls + 1] = {'hset', KEYS[4], owner, server_now + liveness}
    calls[#calls + 1] = {'pexpire', KEYS[4], math.floor(keep)}
end
local refused_after = refused_call(calls, waits and 'waiting for the fair lock' or 'trying the fair lock', 2)
if refused_after then
    return refused_after
end
if wakes then redis.call(ARGV[6], ARGV[8] .. ':' .. head, unlock_message) end
drop_dead(dead)
if not waits then
    return 1
end
if joining and redis.call('zadd', KEYS[3], deadline, owner) == 1 then
    redis.call('rpush', KEYS[2], owner)
end
redis.call('hset', KEYS[4], owner, server_now + liveness)
redis.call('pexpire', KEYS[4], math.floor(keep))

if not free then
    if pttl >= 0 then return pttl end
    return liveness
end
local wait = liveness
if head_deadline then wait = math.min(wait, tonumber(head_deadline) - now) end
if head_alive then wait = math.min(wait, tonumber(head_alive) - server_now) end
return math.max(0, wait)
