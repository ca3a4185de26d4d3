package redis

import goredis "github.com/redis/go-redis/v9"

// The scripts are immutable after package initialisation; each runs
// atomically on the server. Their keys are passed as KEYS, so that a
// cluster can route them.

// claims is the prelude of the scripts that read a claim key. A claim is
// "<token> <lapse time, Unix ms of the server's clock>", with no expiry: a
// lapsed claim stays on its letter until another replay takes it, so that
// its holder can still tell whether anyone did. claim(key) returns the
// token and whether the claim still holds. A key of another form (a claim
// taken before lapse times were stored, which expires by itself) holds.
const claims = `
local function now_ms()
	local t = redis.call('TIME')
	return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function claim(key)
	local v = redis.call('GET', key)
	if not v then return nil, false end
	local token, lapse = string.match(v, '^(%S+) (%d+)$')
	if not token then return v, true end
	return token, tonumber(lapse) > now_ms()
end
`

// indexes is the prelude of the scripts that store a letter: index(order,
// idx, id, entry) writes the letter's summary entry (see entryOf) in the
// hash idx, after its put order (its score in the sorted set order) and a
// space.
const indexes = `
local function index(order, idx, id, entry)
	redis.call('HSET', idx, id, string.format('%d', redis.call('ZSCORE', order, id)) .. ' ' .. entry)
end
`

// putScript: KEYS letters, order, seq, claim, index; ARGV id, record,
// summary entry. Returns 1 if stored, 0 for a duplicate. A letter with a
// claim, lapsed or not, is being replayed: a put over it is a new death,
// and voids the claim.
var putScript = goredis.NewScript(indexes + `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
	if redis.call('EXISTS', KEYS[4]) == 0 then return 0 end
	redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
	redis.call('DEL', KEYS[4])
	index(KEYS[2], KEYS[5], ARGV[1], ARGV[3])
	return 1
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[1])
index(KEYS[2], KEYS[5], ARGV[1], ARGV[3])
return 1`)

// putFromScript: KEYS letters, order, seq, claim, list, index; ARGV id,
// record, payload, summary entry. Removes one payload from list, then puts.
// Returns {stored, removed}.
var putFromScript = goredis.NewScript(indexes + `
local removed = redis.call('LREM', KEYS[5], -1, ARGV[3])
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
	if redis.call('EXISTS', KEYS[4]) == 0 then return {0, removed} end
	redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
	redis.call('DEL', KEYS[4])
	index(KEYS[2], KEYS[6], ARGV[1], ARGV[4])
	return {1, removed}
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[1])
index(KEYS[2], KEYS[6], ARGV[1], ARGV[4])
return {1, removed}`)

// claimScript: KEYS letters, claim; ARGV id, token, lease (ms).
// Returns {1, record}, {0} if absent, {-1} if claimed.
var claimScript = goredis.NewScript(claims + `
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then return {0} end
local _, holds = claim(KEYS[2])
if holds then return {-1} end
redis.call('SET', KEYS[2], ARGV[2] .. ' ' .. string.format('%d', now_ms() + tonumber(ARGV[3])))
return {1, rec}`)

// ackScript: KEYS letters, order, claim, index; ARGV id, token, record as
// claimed.
// Removes the letter if token still has the claim, lapsed or not: returns
// 1. Returns 2 if a put replaced the letter (a new death, kept), 0 if
// another replay took it after the claim lapsed.
var ackScript = goredis.NewScript(claims + `
if claim(KEYS[3]) == ARGV[2] then
	redis.call('HDEL', KEYS[1], ARGV[1])
	redis.call('ZREM', KEYS[2], ARGV[1])
	redis.call('DEL', KEYS[3])
	redis.call('HDEL', KEYS[4], ARGV[1])
	return 1
end
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if rec and rec ~= ARGV[3] then return 2 end
return 0`)

// releaseScript: KEYS claim; ARGV token. Drops the claim if token has it.
var releaseScript = goredis.NewScript(claims + `
if claim(KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`)

// moveScript: KEYS letters, order, claim, list, index; ARGV id, record,
// payload.
// If no claim holds the letter and it is still record, pushes payload on
// list and removes the letter. Returns 1, 0 if absent, -1 if claimed, -2 if
// changed.
var moveScript = goredis.NewScript(claims + `
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then return 0 end
local _, holds = claim(KEYS[3])
if holds then return -1 end
if rec ~= ARGV[2] then return -2 end
redis.call('LPUSH', KEYS[4], ARGV[3])
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
redis.call('HDEL', KEYS[5], ARGV[1])
return 1`)

// discardScript: KEYS letters, order, claim, index; ARGV id.
// Returns 1, 0 if absent, -1 if claimed.
var discardScript = goredis.NewScript(claims + `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
local _, holds = claim(KEYS[3])
if holds then return -1 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
redis.call('HDEL', KEYS[4], ARGV[1])
return 1`)

// purgeScript: KEYS letters, order, index, claim of each id; ARGV the ids.
// Removes those no claim holds; returns how many it removed.
var purgeScript = goredis.NewScript(claims + `
local n = 0
for i, id in ipairs(ARGV) do
	local _, holds = claim(KEYS[i + 3])
	if not holds and redis.call('HDEL', KEYS[1], id) == 1 then
		redis.call('ZREM', KEYS[2], id)
		redis.call('HDEL', KEYS[3], id)
		redis.call('DEL', KEYS[i + 3])
		n = n + 1
	end
end
return n`)

// backfillScript: KEYS letters, order, index; ARGV id, summary entry.
// Writes the entry of a letter stored before entries were, if the letter
// is still there and has none.
var backfillScript = goredis.NewScript(indexes + `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 or redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then return 0 end
index(KEYS[2], KEYS[3], ARGV[1], ARGV[2])
return 1`)
