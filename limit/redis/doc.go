// Package redis keeps a limit.Adaptive limiter's state in Redis, so that a
// fleet of instances sharing one rate limit — one API key — behaves as one
// client: one instance's throttled answer slows every instance, and the
// fleet's turns come in one line.
//
// A rate limit belongs to an API key, not to a process. Instances that each
// limit themselves learn too little from their own 429s: in bench/ratelimit,
// 1,000 clients with one limit.Adaptive each still see about 75% of their
// calls throttled, no better than retrying alone, where one limiter shared
// by all of them sees 16%.
//
// Each Acquire that limits is one round trip: a Lua script that reads Redis's
// clock, takes in the instance's news since its last round trip (answers
// accepted, throttled, and their Retry-After), cuts or grows the shared rate
// as limit.Adaptive does, and reserves the attempt's turn in a GCRA line if it
// comes within maxWait. Record never waits for Redis: its news go with the
// next Acquire. While the fleet does not limit yet (no throttled answer so
// far), an instance asks Redis at most every Sync, so that an unthrottled
// API costs no round trip per call; its first throttled answer asks at once.
//
//	| option    | default | meaning                                                         |
//	|-----------|---------|-----------------------------------------------------------------|
//	| Prefix    | ""      | prepended to the limit's key, retry:limit:<name>                |
//	| OpTimeout | 200ms   | the longest an Acquire waits for Redis                          |
//	| Recheck   | 1s      | after Redis failed, how long to limit locally before asking it  |
//	| Sync      | 50ms    | while the fleet does not limit, how often an instance asks      |
//	| TTL       | 1h      | how long the shared state outlives the last call                |
//	| Adaptive  | {}      | the limiter's parameters (limit.AdaptiveConfig and its defaults) |
//
// # When Redis goes away
//
// No Acquire waits for Redis longer than OpTimeout, whatever the go-redis
// client's settings (a client honours a context's deadline only with
// ContextTimeoutEnabled; so each command runs in a goroutine of its own, as
// in breaker/redis). If Redis does not answer, the instance limits with its
// own limit.Adaptive (Local), which has learnt from every answer all along,
// and asks Redis again after Recheck. The tests kill and SIGSTOP a real
// redis-server under 8 callers.
//
// What it cannot do: a turn reserved before a cut is not pushed back (the
// instance is already sleeping until it); the line after it is stretched to
// the new rate instead, so that the fleet's average is right. The shared
// state lives in Redis only: a Redis restarted without persistence has
// forgotten the limit, and the fleet learns it again from the next 429.
package redis
