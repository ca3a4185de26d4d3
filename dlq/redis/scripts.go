package redis

import goredis "github.com/redis/go-redis/v9"

// The scripts are immutable after package initialisation; each runs
// atomically on the server. Their keys are passed as KEYS, so that a
// cluster can route them.

// putScript: KEYS letters, order, seq, claim; ARGV id, record.
// Returns 1 if stored, 0 for a duplicate.
var putScript = goredis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
	if redis.call('EXISTS', KEYS[4]) == 0 then return 0 end
	redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
	redis.call('DEL', KEYS[4])
	return 1
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[1])
return 1`)

// putFromScript: KEYS letters, order, seq, claim, list; ARGV id, record,
// payload. Removes one payload from list, then puts. Returns {stored,
// removed}.
var putFromScript = goredis.NewScript(`
local removed = redis.call('LREM', KEYS[5], -1, ARGV[3])
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
	if redis.call('EXISTS', KEYS[4]) == 0 then return {0, removed} end
	redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
	redis.call('DEL', KEYS[4])
	return {1, removed}
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[1])
return {1, removed}`)

// claimScript: KEYS letters, claim; ARGV id, token, lease (ms).
// Returns {1, record}, {0} if absent, {-1} if claimed.
var claimScript = goredis.NewScript(`
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then return {0} end
if not redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ARGV[3]) then return {-1} end
return {1, rec}`)

// ackScript: KEYS letters, order, claim; ARGV id, token.
// Removes the letter if token still holds it. Returns 1, or 0.
var ackScript = goredis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
return 1`)

// releaseScript: KEYS claim; ARGV token. Drops the claim if token holds it.
var releaseScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`)

// moveScript: KEYS letters, order, claim, list; ARGV id, record, payload.
// If the letter is unclaimed and still record, pushes payload on list and
// removes the letter. Returns 1, 0 if absent, -1 if claimed, -2 if changed.
var moveScript = goredis.NewScript(`
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then return 0 end
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
if rec ~= ARGV[2] then return -2 end
redis.call('LPUSH', KEYS[4], ARGV[3])
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1`)

// discardScript: KEYS letters, order, claim; ARGV id.
// Returns 1, 0 if absent, -1 if claimed.
var discardScript = goredis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1`)

// purgeScript: KEYS letters, order, claim of each id; ARGV the ids.
// Removes the unclaimed ones; returns how many it removed.
var purgeScript = goredis.NewScript(`
local n = 0
for i, id in ipairs(ARGV) do
	if redis.call('EXISTS', KEYS[i + 2]) == 0 and redis.call('HDEL', KEYS[1], id) == 1 then
		redis.call('ZREM', KEYS[2], id)
		n = n + 1
	end
end
return n`)
