// Package redis keeps circuit breakers' state in Redis, so that a fleet of
// instances opens, probes and closes together: gobreaker v2's
// DistributedCircuitBreaker with a SharedDataStore on go-redis v9. Circuit
// is a breaker.Config.NewCircuit: each call key gets a distributed breaker
// named by the key, under gobreaker's own keys (gobreaker:state:<name>,
// gobreaker:mutex:<name>, after the Store's Prefix):
//
//	store, _ := redis.NewStore(client, redis.Config{Prefix: "prod:"})
//	breakers, _ := breaker.New(breaker.Config{Timeout: 30 * time.Second, NewCircuit: redis.Circuit(store)})
//	r, _ := retry.New(retry.WithBreakers(breakers))
//
// gobreaker's distributed breaker holds a Redis lock for the whole request it
// guards, which would let one request at a time through the whole fleet. The
// Circuit of this package uses it in two short steps instead: it admits a call
// by reading the shared state (one GET; a lock and a write only when an open
// breaker's timeout has passed), lets the call run unlocked, and reports the
// outcome through the distributed breaker (the lock, a GET, a SET, the
// unlock). The lock is held for those round trips, never for the call.
//
//	| setting   | default | meaning                                                           |
//	|-----------|---------|-------------------------------------------------------------------|
//	| Prefix    | ""      | prepended to every key (gobreaker's keys are gobreaker:*)         |
//	| LockTTL   | 2s      | a crashed holder's lock expires after this                        |
//	| LockWait  | 100ms   | how long a busy lock is tried (1ms, then up to 10ms apart)        |
//	| OpTimeout | 1s      | the longest a Store method or a Circuit step waits for Redis      |
//	| Recheck   | 1s      | after Redis failed, how long to count locally before asking again |
//	| Replicas  | 0       | replicas each write waits for (WAIT) before it counts as done     |
//
// # When Redis goes away
//
// No call waits for Redis longer than OpTimeout per step — admitting it, then
// reporting its outcome — whatever the go-redis client's settings. A client
// honours a context's deadline only with ContextTimeoutEnabled, and otherwise
// waits for its ReadTimeout (3s by default, per retry); so each Redis command
// runs in a goroutine of its own and the caller returns at the deadline,
// while the abandoned command ends within the client's own timeouts. The
// Circuit takes the fleet's lock itself, for at most LockWait, rather than
// through gobreaker, which retries a busy or failing lock for 5s, 500ms
// apart, inside the caller's call. The tests kill and SIGSTOP a real
// redis-server under 16 callers using a client with default settings: with
// OpTimeout at 200ms, the longest wait of a call was 0.20–0.23s on an idle
// machine.
//
// If Redis cannot be reached, or the fleet's lock cannot be taken within
// LockWait to report an outcome, an instance falls back to its own local
// counts — the breaker fails open to local protection: the shared state as of
// its last update, plus what it counted since — and after Recheck one of its
// calls asks Redis again, so that an outage does not add OpTimeout to every
// call. Its local counts open the breaker as the shared ones would. Making a
// key's breaker asks Redis nothing, so a key first seen while Redis is down
// is guarded the same way, from empty counts. An open
// breaker whose timeout has passed while another instance holds the lock
// keeps rejecting calls until that instance moved it to half-open.
//
// Locks belong to their holders: each holder sets the lock with a token of
// its own and only that token releases it, so a holder whose lock expired
// never releases a lock another has taken since (see Store.Unlock for
// gobreaker's interface, which names no holder).
//
// Redis Cluster: a breaker's state and its lock are two keys, and no script
// touches more than one; the tests run the store and a fleet's breaker on a
// real cluster (three primaries, a replica each). Redis feeds replicas
// asynchronously, so a primary that dies can take the last writes with it:
// the replica that takes over has the breaker as it was a moment before,
// closed if it never saw it open. With Config.Replicas, a write counts as
// done only once that many replicas have it (WAIT, sent after it on the same
// connection); one they do not confirm within OpTimeout (at most a second)
// is a Redis failure, and the Circuit counts locally.
//
// What it cannot do: while half-open, each instance lets MaxRequests probes
// through, so a fleet of n instances may send n × MaxRequests probes. The
// shared state lives in Redis only: a Redis restarted without persistence
// has forgotten it, and the breaker starts again closed.
package redis
