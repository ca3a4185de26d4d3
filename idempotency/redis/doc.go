// Package redis is an idempotency.Store kept in Redis, for processes that
// share idempotency keys: every replica of a service, every worker of a
// queue.
//
//	client := goredis.NewClient(&goredis.Options{Addr: "localhost:6379"})
//	store, err := redis.New(client, redis.Config{})
//	…
//	res, err := idempotency.Do(ctx, store, key, fingerprint, fn)
//
// Each key is one Redis string, named by the prefix (Config.Prefix) and
// idempotency.StoreKey.String (the idempotency key itself when it has no
// scope), holding the record as idempotency.Record.MarshalBinary encodes
// it, with the lease or the retention as its expiry (PX), so Redis itself
// drops what has expired.
// Every transition is one Lua script — one round trip, atomic on the server:
//
//	Claim     GET the key; if absent, SET it to the claim with PX lease
//	Extend    if the key holds the caller's claim, PEXPIRE it
//	Complete  if the key holds the caller's claim, SET it to the record with PX retention
//	Release   if the key holds the caller's claim, DEL it
//
// "Holds the caller's claim" compares the stored record's first bytes —
// format version, InProgress status, token — with the caller's token, on the
// server: a stale executor whose lease expired, or whose key another
// execution claimed since, is refused (idempotency.ErrClaimLost) and cannot
// overwrite a newer claim or result. Scripts touch one key each, so the store
// works on Redis Cluster: the tests run its contract on a real one (three
// primaries, a replica each), and move a slot (MIGRATE, ASK, then MOVED)
// while workers claim and complete its keys: nothing is lost and no key runs
// twice. They use nothing newer than Redis 2.6 (tested on 7.0), and run by
// EVALSHA, falling back to EVAL when the server's script cache is empty, as
// after a restart.
//
// Every method returns by the end of its context, whatever the client's
// timeouts: a command to a hung Redis is left to end with the client's
// ReadTimeout, its answer dropped. With a 300ms deadline and Redis hung,
// gone, resetting or answering late, the tests saw no call of
// idempotency.Do return more than 30ms past its deadline; an outcome not
// recorded by then is recorded when Redis answers (see idempotency.Do).
//
// The store does not implement idempotency.Waiter: a caller waiting for a
// key in progress polls it, 10ms doubling to 500ms
// (idempotency.WithPollInterval).
// It bounds no scope: Redis's maxmemory and its eviction policy decide what
// happens when it is full (noeviction refuses writes, which the middleware
// answers with 503; an evicting policy can forget a record before its time).
//
// # Defaults
//
//	setting                   default          Config field
//	key prefix                "idempotency:"   Prefix; Unprefixed for none
//	replicas a write waits    0 (none)         Replicas (WAIT, at most 1s)
//
// # Durability
//
// The store is as durable as the Redis behind it. Redis's defaults — RDB
// snapshots every few minutes, no append-only file — lose in a crash every
// write since the last snapshot: those claims and results are forgotten, and
// their keys run again. Run Redis with the append-only file, fsynced on every
// write:
//
//	appendonly yes
//	appendfsync always
//
// With these, a claim or result Redis acknowledged survives a crash of
// redis-server: the tests SIGKILL it while 20 executions are in flight and
// restart it on the same data directory, and no key runs again. Without
// persistence the same crash forgets every claim and every result: all 20
// keys in flight ran a second time, concurrently with their first execution
// (whose results were then refused, ErrClaimLost), and every finished key
// ran again. appendfsync everysec, Redis's default fsync policy for the
// append-only file, may lose the last second or two of writes to an
// operating system crash or a power loss (that rests on Redis's documented
// behaviour; the tests kill only the process).
//
// # Replicas and failover
//
// Redis feeds its replicas asynchronously: it acknowledges a write before
// any replica has it. A primary that dies takes with it what its replica had
// not received yet, and the replica that takes over never had it. The tests
// measure it on a real Redis Cluster: eight workers claim and complete keys
// on one primary, its replica falls 200ms behind (cut off from its primary),
// the primary is killed (SIGKILL) and the replica takes over. In three runs,
// 122–139 of the 218–236 results acknowledged before the kill were lost, and
// so were the claims of all 8 executions then running: the keys of those
// claims, and of the results whose claims were lost with them, ran again at
// once (the others, whose claims came back, once their leases end). With a
// replica up to date — on loopback, with no lag — the same kill lost nothing
// in three runs: a failover loses what the replica lags behind by, which a
// network blip, a slow replica or a full resynchronisation can make seconds.
//
// Config.Replicas closes that window: a write is acknowledged only once that
// many replicas have it (WAIT, sent after the write on the same connection,
// to the primary of the key's slot). In the same test with Replicas: 1, none
// of 96 acknowledged results and none of 8 acknowledged claims was lost, and
// no key ran twice; the writes the lagging replica could not confirm failed
// instead (idempotency.ErrStore, nothing run). What it costs: each write
// also waits for its replica's acknowledgement, a round trip between the
// primary and the replica — across zones, their network's. On loopback, on
// a loaded two-core machine, idempotency.Do on a new key (two writes) took a
// median 1.5 times as long (bench/durability, six paired runs: 1.2–2.8
// times).
// While fewer replicas than Replicas are connected — after a failover, until
// the old primary comes back as a replica — every call fails after a second.
package redis
