// Package redis keeps a limit.Adaptive limiter's state in Redis, so that a
// fleet of instances sharing one rate limit — one API key — behaves as one
// client: one instance's throttled answer slows every instance, and the
// fleet's turns come in one line.
//
// A rate limit belongs to an API key, not to a process. Instances that each
// limit themselves learn too little from their own 429s: in bench/ratelimit,
// 1,000 clients with one limit.Adaptive each still see about 75% of their
// calls throttled, no better than retrying alone, where one limiter shared
// by all of them sees 16%, and 1.3% with a slow start (Adaptive.Start).
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
// With Adaptive.Start, a new fleet limits from its first call instead, as
// limit.Adaptive does: at Start, doubling every Window/10 while its line is
// busy, until its first throttled answer — a fleet that starts all at once
// does not spend its first burst on 429s. It then asks Redis on every call.
//
//	| option    | default | meaning                                                         |
//	|-----------|---------|-----------------------------------------------------------------|
//	| Prefix    | ""      | prepended to the limit's key, retry:limit:<name>                |
//	| OpTimeout | 200ms   | the longest an Acquire waits for Redis (and half its time left) |
//	| Recheck   | 1s      | after Redis failed, how long to limit locally before asking it  |
//	| Sync      | 50ms    | while the fleet does not limit, how often an instance asks      |
//	| TTL       | 1h      | how long the shared state outlives the last call                |
//	| Adaptive  | {}      | the limiter's parameters (limit.AdaptiveConfig and its defaults) |
//
// # When Redis goes away
//
// No Acquire waits for Redis longer than OpTimeout, nor longer than half of
// what is left of its context's deadline, whatever the go-redis client's
// settings (a client honours a context's deadline only with
// ContextTimeoutEnabled, and retries a dial for up to a second: so each
// script runs in a goroutine of its own, as in breaker/redis). Without
// Redis's answer by then the instance's own limit.Adaptive (Local), which
// has learnt from every answer all along, decides: a caller of any deadline
// is limited locally within min(OpTimeout, half its time left) while Redis
// hangs, is gone, or the network holds or resets its packets. A script that
// has not answered within OpTimeout — its caller may have left sooner —
// takes Redis for away: the instance limits locally for Recheck, then asks
// again, and the fleet decides again within Recheck + OpTimeout of Redis's
// return.
//
// A script whose caller stopped waiting reserves nothing: the caller sends
// the time it stops waiting, and the script compares it with Redis's clock
// (so the instances' clocks must agree with Redis's to a few milliseconds,
// as NTP keeps them). Answers count once: an instance sends its counts
// since it started, and the hash keeps, in a field per instance
// ("i:<id>", deleted TTL after the instance's last call), what it has taken
// in, so a script that runs after its caller gave up, or that go-redis sent
// again after a reset, counts nothing twice. A Redis restarted with empty
// data starts the fleet at the rate the first instance to ask last heard
// (within TTL), probing slowly up from there, instead of letting every call
// through until the next throttled answer.
//
// The tests strike a real redis-server under 8 callers for 1s, with
// OpTimeout 200ms and Recheck 300ms, callers' deadlines 100ms (150ms after
// SIGKILL): no caller waited more than 37ms past its deadline (under a
// black hole, on a loaded machine; 0 in the other faults), and the local
// limiter admitted what it allowed —
//
//	| fault                       | admitted, refused | fleet back after | answers counted |
//	|-----------------------------|-------------------|------------------|-----------------|
//	| SIGSTOP (hung), then SIGCONT| 575, 0            | 15ms             | each once       |
//	| SIGKILL, then a restart     | 628, 0            | 550ms            | each once       |
//	| network black hole          | 561, 0            | 15ms             | each once       |
//	| reset in mid-reply          | 571, 0            | 320ms            | each once       |
//
// and after a restart with empty data, a fleet that had learnt 20 a second
// admitted 20 in the next second.
//
// What it cannot do: a turn reserved before a cut is not pushed back (the
// instance is already sleeping until it); the line after it is stretched to
// the new rate instead, so that the fleet's average is right. A turn whose
// answer was lost (a reset in mid-reply) is not given back. The fleet's
// state lives in Redis only: a Redis restarted empty keeps no more than the
// rate its instances knew.
package redis
