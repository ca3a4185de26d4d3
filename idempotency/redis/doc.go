// Package redis is an idempotency.Store kept in Redis, for processes that
// share idempotency keys: every replica of a service, every worker of a
// queue.
//
//	client := goredis.NewClient(&goredis.Options{Addr: "localhost:6379"})
//	store, err := redis.New(client)
//	…
//	res, err := idempotency.Do(ctx, store, key, fingerprint, fn)
//
// Each key is one Redis string, named by the prefix and
// idempotency.StoreKey.String (the idempotency key itself when it has no
// scope), holding the record as idempotency.Record.MarshalBinary encodes it, with the lease or the
// retention as its expiry (PX), so Redis itself drops what has expired.
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
// works on Redis Cluster. They use nothing newer than Redis 2.6 (tested on
// 7.0), and run by EVALSHA, falling back to EVAL when the server's script
// cache is empty, as after a restart.
//
// The store does not implement idempotency.Waiter: a caller waiting for a
// key in progress polls it, 10ms doubling to idempotency.WithPollInterval.
// It bounds no scope: Redis's maxmemory and its eviction policy decide what
// happens when it is full (noeviction refuses writes, which the middleware
// answers with 503; an evicting policy can forget a record before its time).
//
// # Defaults
//
//	setting      default          option
//	key prefix   "idempotency:"   WithPrefix
//
// Durability is Redis's: a Redis that restarts without persistence forgets
// every claim and result, and keys used before run again.
package redis
