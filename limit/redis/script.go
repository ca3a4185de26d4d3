package redis

import goredis "github.com/redis/go-redis/v9"

// acquireScript is the fleet's limiter, run by Redis in one round trip per
// permission: it takes in the caller's news since its last call (answers
// accepted, throttled ones and their longest Retry-After), cuts or grows
// the shared rate as limit.Adaptive does, and reserves the caller's turn in
// a GCRA line (the theoretical arrival time, tat) if it comes within
// maxWait. Times are microseconds of Redis's own clock (TIME), the same for
// every instance.
//
// KEYS[1]: the limit's hash. ARGV: accepted, throttled, retryAfter (µs),
// maxWait (µs), take (1 to reserve a turn, 0 only to report), the
// configuration: beta, scale, probe, minRate, burst (µs), hold (µs), window
// (µs), ttl (ms), patience (s); then timedOut, how many of the throttled
// answers were timeouts (limit.AdaptiveConfig.Timeouts).
//
// A cut whose throttled answers were all timeouts is limit.Adaptive's
// timeout cut: its curve returns to peak, the rate accepted away from any
// cut, and grows past it as the cube at once (pat 0); and the rate stays
// at the cut until an instance reports answers in time again (tw), since
// limit.Adaptive moves along its curve only as answers come, where this
// script moves on every call.
//
// It returns {wait (µs; -1: not within maxWait; -2: the fleet does not limit
// yet), rate (as a string)}.
//
// Fields: en (1 once throttled), rate, wmax, k (s), cut, tat, acc
// (cumulative accepted), t0 and a0 (the start of the current measurement and
// acc then), t1 and a1 (the start of the one before), peak, pat (the last
// cut's patience, s), tw (1: a timeout's cut waits for answers in time).
var acquireScript = goredis.NewScript(`
local key = KEYS[1]
local accepted, throttled, retryAfter = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local maxWait, take = tonumber(ARGV[4]), tonumber(ARGV[5])
local beta, scale, probe, minRate = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local burst, hold, window, ttl = tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
local patience, timedOut = tonumber(ARGV[14]), tonumber(ARGV[15])

local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local s = redis.call("HMGET", key, "en", "rate", "wmax", "k", "cut", "tat", "acc", "t0", "a0", "t1", "a1", "peak", "pat", "tw")
local en, rate, wmax, k = tonumber(s[1]) or 0, tonumber(s[2]) or 0, tonumber(s[3]) or 0, tonumber(s[4]) or 0
local cut, tat, acc = tonumber(s[5]) or 0, tonumber(s[6]) or 0, (tonumber(s[7]) or 0) + accepted
local t0, a0 = tonumber(s[8]) or now, tonumber(s[9]) or 0
local t1, a1 = tonumber(s[10]) or t0, tonumber(s[11]) or a0
local peak, pat, tw = tonumber(s[12]) or 0, tonumber(s[13]) or patience, tonumber(s[14]) or 0

if accepted > 0 and now - t1 >= window and (en == 0 or now - cut >= window) then
	peak = (acc - a1) * 1000000 / (now - t1)
end

if throttled > 0 and ((en == 0 and now - t1 >= hold) or (en == 1 and now >= cut + hold)) then
	-- The rate the server accepted since the older sample (taken at the
	-- last cut, or one to two windows ago): its own measure of its limit.
	local span = math.max(now - t1, 1000)
	local acceptedRate = (acc - a1) * 1000000 / span
	local newRate = math.max(beta * math.max(acceptedRate, minRate), minRate)
	if en == 1 and rate > 0 then
		-- The line promised at the old rate is stretched to the new one.
		if tat > now then tat = now + (tat - now) * rate / newRate end
	else
		tat = now
	end
	wmax, pat, tw = math.max(acceptedRate, minRate), patience, 0
	if timedOut == throttled then
		wmax, pat, tw = math.max(wmax, peak), 0, 1
	end
	k = math.max(((wmax * (1 - beta)) / scale) ^ (1 / 3), retryAfter / 1000000)
	cut, en = now, 1
	rate = newRate
	t0, a0, t1, a1 = now, acc, now, acc
elseif en == 1 and (tw == 0 or accepted > 0) then
	tw = 0
	local x = (now - cut) / 1000000
	local d = math.min(x - k, 0)
	rate = wmax + scale * d * d * d
	if x > k then
		local late = math.max(x - k - pat, 0)
		rate = rate + probe * wmax * (x - k) + scale * late * late * late
	end
	rate = math.max(rate, minRate)
end
if now - t0 > window then t1, a1, t0, a0 = t0, a0, now, acc end

local wait = -2
if en == 1 and take == 1 then
	-- GCRA: the turn is due when the line is within a burst of now.
	local line = math.max(tat, now)
	wait = math.max(line - burst - now, 0)
	if wait > maxWait then
		wait = -1
	else
		tat = line + 1000000 / rate
	end
end
redis.call("HSET", key, "en", en, "rate", rate, "wmax", wmax, "k", k, "cut", cut, "tat", tat, "acc", acc,
	"t0", t0, "a0", a0, "t1", t1, "a1", a1, "peak", peak, "pat", pat, "tw", tw)
redis.call("PEXPIRE", key, ttl)
if en == 0 then return {wait, "inf"} end
return {math.floor(wait), tostring(rate)}
`)
