// Package redis keeps a circuit breaker's state in Redis, so that a fleet of
// instances opens, probes and closes together: gobreaker v2's
// DistributedCircuitBreaker with a SharedDataStore on go-redis v9.
//
// gobreaker's distributed breaker holds a Redis lock for the whole request it
// guards, which would let one request at a time through the whole fleet. The
// Circuit of this package uses it in two short steps instead: it admits a call
// by reading the shared state (one GET; a lock and a write only when an open
// breaker's timeout has passed), lets the call run unlocked, and reports the
// outcome through the distributed breaker (a GET, the lock, a SET, the
// unlock). The lock is held for two round trips, never for the call.
//
//	| setting        | default | meaning                                                       |
//	|----------------|---------|---------------------------------------------------------------|
//	| Prefix         | ""      | prepended to every key (gobreaker's keys are gobreaker:*)     |
//	| LockTTL        | 2s      | a crashed holder's lock expires after this                    |
//	| LockWait       | 100ms   | how long Lock spins (1ms, then up to 10ms apart) before busy  |
//	| OpTimeout      | 1s      | deadline of each Redis command                                |
//	| Recheck        | 1s      | after Redis failed, how long to count locally before retrying |
//
// What it cannot do: while half-open, each instance lets MaxRequests probes
// through, so a fleet of n instances may send n × MaxRequests probes. If Redis
// cannot be reached, each instance falls back to its own local counts (the
// breaker fails open to local protection) and asks Redis again after Recheck,
// so that an outage does not add Redis's timeout to every call.
package redis
