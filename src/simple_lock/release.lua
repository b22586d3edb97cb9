-- Simple lock release: compare-and-delete, publishing nothing (its peers listen to no channel).
-- KEYS[1] lock key; ARGV[1] owner token.
-- Reply 1 when the key held the token and is deleted; nil when it holds another token or none.
if redis.call('get', KEYS[1]) == ARGV[1] then
    redis.call('del', KEYS[1])
    return 1
end
return nil
