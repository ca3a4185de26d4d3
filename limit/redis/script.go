package redis

import goredis "github.com/redis/go-redis/v9"

// acquireScript is the fleet's limiter, run by Redis in one round trip per
// permission: it takes in the caller's news (answers accepted, throttled
// ones and their longest Retry-After), cuts or grows the shared rate as
// limit.Adaptive does, and reserves the caller's turn in a GCRA line (the
// theoretical arrival time, tat) if it comes within maxWait, and only while
// the caller still waits for the answer. Times are microseconds of Redis's
// own clock (TIME), the same for every instance.
//
// KEYS[1]: the limit's hash. ARGV: the instance's id; its answers accepted,
// throttled and timed out (of the throttled: limit.AdaptiveConfig.Timeouts),
// cumulative; the same as of its last answer from Redis; retryAfter (µs);
// maxWait (µs); take (1 to reserve a turn, 0 only to report); giveUp (µs
// since the Unix epoch: when the caller stops waiting for the answer); seed
// (the rate to start a fleet whose state is gone at, 0 for none); the
// configuration: beta, scale, probe, minRate, burst (µs), hold (µs), window
// (µs), ttl (ms), patience (s), start (limit.AdaptiveConfig.Start; 0 for
// none).
//
// News are counted once: the hash keeps, for each instance ("i:" .. id),
// the counts it has taken in, and takes in only what exceeds them — a
// script that runs after its caller gave up, or that go-redis sent again,
// brings nothing twice. A Redis that forgot the instance (a restart) counts
// from the instance's last answer. With each new measurement (every
// window), the script looks at a few more entries, going round the hash
// (HSCAN; pc is where it stopped), and deletes those of instances silent
// for ttl.
//
// A fleet whose state is gone (a Redis restarted empty) starts at seed, the
// rate the instance last heard, as if at the plateau of a cut, instead of
// letting every call through until the next throttled answer.
//
// A new fleet with a start limits from its first call at start, and
// doubles its rate every window/10 while its line is busy and nothing is
// throttled (ss, dbl), until its first cut, as limit.Adaptive does.
//
// A cut whose throttled answers were all timeouts is limit.Adaptive's
// timeout cut: its curve returns to peak, the rate accepted away from any
// cut, and grows past it as the cube at once (pat 0); and the rate stays
// at the cut until an instance reports answers in time again (tw), since
// limit.Adaptive moves along its curve only as answers come, where this
// script moves on every call.
//
// It returns {wait (µs; -1: not within maxWait, or the caller is gone; -2:
// the fleet does not limit yet), rate (as a string)}.
//
// Fields: en (1 once throttled), rate, wmax, k (s), cut, tat, acc
// (cumulative accepted), t0 and a0 (the start of the current measurement and
// acc then), t1 and a1 (the start of the one before), peak, pat (the last
// cut's patience, s), tw (1: a timeout's cut waits for answers in time), ss
// (1 in a slow start) and dbl (its last doubling), pc (the cursor of the
// round of the entries);
// "i:" .. id: "accepted throttled timedOut seen(s)" of each instance.
var acquireScript = goredis.NewScript(`
local key = KEYS[1]
local id = ARGV[1]
local nAcc, nThr, nTo = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local retryAfter, maxWait, take = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local giveUp, seed = tonumber(ARGV[11]), tonumber(ARGV[12])
local beta, scale, probe, minRate = tonumber(ARGV[13]), tonumber(ARGV[14]), tonumber(ARGV[15]), tonumber(ARGV[16])
local burst, hold, window, ttl = tonumber(ARGV[17]), tonumber(ARGV[18]), tonumber(ARGV[19]), tonumber(ARGV[20])
local patience, start = tonumber(ARGV[21]), tonumber(ARGV[22])

local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

-- The instance's news: what exceeds what the hash has taken in from it.
local me = "i:" .. id
local sAcc, sThr, sTo = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local seen = redis.call("HGET", key, me)
if seen then
	local a, b, c = string.match(seen, "^(%d+) (%d+) (%d+)")
	sAcc, sThr, sTo = tonumber(a), tonumber(b), tonumber(c)
end
local accepted, throttled, timedOut = math.max(nAcc - sAcc, 0), math.max(nThr - sThr, 0), math.max(nTo - sTo, 0)

local s = redis.call("HMGET", key, "en", "rate", "wmax", "k", "cut", "tat", "acc", "t0", "a0", "t1", "a1", "peak", "pat", "tw", "ss", "dbl")
local en, rate, wmax, k = tonumber(s[1]) or 0, tonumber(s[2]) or 0, tonumber(s[3]) or 0, tonumber(s[4]) or 0
local cut, tat, acc = tonumber(s[5]) or 0, tonumber(s[6]) or 0, (tonumber(s[7]) or 0) + accepted
local t0, a0 = tonumber(s[8]) or now, tonumber(s[9]) or 0
local t1, a1 = tonumber(s[10]) or t0, tonumber(s[11]) or a0
local peak, pat, tw = tonumber(s[12]) or 0, tonumber(s[13]) or patience, tonumber(s[14]) or 0
local ss, dbl = tonumber(s[15]) or 0, tonumber(s[16]) or 0

if not s[1] and seed > 0 then
	-- A fleet whose state is gone: at the rate the instance last heard, at
	-- the plateau of a cut made then, probing slowly from there.
	en, rate, wmax, k, cut, tat, pat = 1, seed, seed, 0, now, now, patience
elseif not s[1] and start > 0 then
	en, rate, cut, tat, ss, dbl = 1, start, now, now, 1, now
end
if ss == 1 and throttled > 0 then
	dbl = now -- no doubling while throttled
elseif ss == 1 and now - dbl >= window / 10 and tat > now - window / 20 then
	rate, dbl = math.min(2 * rate, 1e9), now
end

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
	cut, en, ss = now, 1, 0
	rate = newRate
	t0, a0, t1, a1 = now, acc, now, acc
elseif en == 1 and ss == 0 and (tw == 0 or accepted > 0) then
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
-- A rate that doubles is measured over the last one to two steps of it:
-- over the whole start, it would be measured far too low.
local step = window
if ss == 1 then step = window / 10 end
if now - t0 > step then
	t1, a1, t0, a0 = t0, a0, now, acc
	-- With each new measurement, a few entries further along the hash
	-- (HSCAN, from where the last one stopped): those of instances silent
	-- for ttl are deleted.
	local scan = redis.call("HSCAN", key, redis.call("HGET", key, "pc") or "0", "COUNT", 8)
	for i = 1, #scan[2], 2 do
		local f, at = scan[2][i], tonumber(string.match(scan[2][i + 1], " (%d+)$"))
		if f ~= me and string.sub(f, 1, 2) == "i:" and at and now / 1000000 - at > ttl / 1000 then
			redis.call("HDEL", key, f)
		end
	end
	redis.call("HSET", key, "pc", scan[1])
end

local wait = -2
if en == 1 and take == 1 then
	-- GCRA: the turn is due when the line is within a burst of now; none
	-- is reserved for a caller no longer waiting for the answer.
	local line = math.max(tat, now)
	wait = math.max(line - burst - now, 0)
	if wait > maxWait or now > giveUp then
		wait = -1
	else
		tat = line + 1000000 / rate
	end
end
redis.call("HSET", key, "en", en, "rate", rate, "wmax", wmax, "k", k, "cut", cut, "tat", tat, "acc", acc,
	"t0", t0, "a0", a0, "t1", t1, "a1", a1, "peak", peak, "pat", pat, "tw", tw, "ss", ss, "dbl", dbl,
	me, string.format("%d %d %d %d", math.max(nAcc, sAcc), math.max(nThr, sThr), math.max(nTo, sTo), math.floor(now / 1000000)))
redis.call("PEXPIRE", key, ttl)
if en == 0 then return {wait, "inf"} end
return {math.floor(wait), tostring(rate)}
`)
