// Package postgres keeps idempotency keys in a PostgreSQL table, through a
// pgx v5 pool, and makes a database effect exactly-once: Store.Tx runs the
// effect, completes its key and stores its result in one transaction, so
// that both commit or neither does — Brandur Leach's "atomic phases", the
// design of Stripe-like APIs.
//
//	pool, err := pgxpool.New(ctx, "postgres://…")
//	store, err := postgres.New(pool, postgres.Config{})
//	err = store.Migrate(ctx) // CREATE TABLE IF NOT EXISTS …
//	res, err := store.Tx(ctx, retrier, pgx.TxOptions{IsoLevel: pgx.Serializable}, key, fingerprint,
//		func(ctx context.Context, tx pgx.Tx) ([]byte, error) {
//			// the effect, through tx
//		})
//
// Store is also an idempotency.Store, for idempotency.Do, Once and the HTTP
// middleware (it passes idempotency/storetest): records shared by every
// process that reaches the database, each transition one statement.
//
// # The table
//
// Schema (schema.sql, applied by Migrate) creates one table, one row per key
// (its scope and key, as bytes), with the record in columns — status, token,
// fingerprint, value — and expires_at, the end of the claim's lease or of
// the result's retention, on the database server's clock. A row past
// expires_at is as good as absent; DeleteExpired deletes such rows, by the
// index on expires_at.
//
// # Round trips
//
//	| call                                  | statements                                   |
//	|---------------------------------------|----------------------------------------------|
//	| Claim (new or expired key)            | 1: INSERT … ON CONFLICT DO UPDATE … WHERE    |
//	|                                       | expired, with the live record read in the    |
//	|                                       | same statement                               |
//	| Claim (key held or completed)         | 1 (the same statement returns the record)    |
//	| Extend, Complete, Release             | 1 each: an UPDATE or DELETE fenced by token  |
//	| idempotency.Do, new key               | 2: Claim, Complete                           |
//	| idempotency.Do, replay                | 1: Claim                                     |
//	| Store.Tx, new key                     | the transaction's own (BEGIN, fn, COMMIT)    |
//	|                                       | + 2: a lookup before it, the completed       |
//	|                                       | record (INSERT) in it                        |
//	| Store.Tx, replay                      | 1: the lookup                                |
//
// A claim that races a concurrent claim of the same key committing in the
// middle of it sees neither its own insert nor the other's row, and asks
// again: rarely two statements.
//
// # Exactly-once with Tx
//
// Tx looks the key up (a completed key is replayed from that one statement),
// then runs the transaction through sqlretry.PgxTx: fn, an INSERT of the
// completed record, COMMIT. Nothing is written before the transaction, so
// if the process dies anywhere before COMMIT, the server rolls back the
// effect and the record together and leaves nothing behind: the next call
// with the key runs fn at once (no lease to wait out).
//
// Two calls with the same key at the same time may both run fn; the second
// one's INSERT waits for the first transaction and then fails (a
// serialization failure under REPEATABLE READ and SERIALIZABLE, a conflict
// under READ COMMITTED; its effect may fail first, on a unique key the
// first one wrote), so its effect rolls back, and it returns the first
// one's result as a replay: one row, whatever the number of callers
// (100 concurrent calls in the tests). The price is the rolled-back work of
// the losers; a lease-based claim (the Store interface) would make them wait
// instead, but would leave a crashed call's key claimed until its lease ran
// out.
//
// A COMMIT whose reply was lost is retried (the transaction is keyed): every
// attempt after the first looks the key up first, finds it completed by its
// own token if the COMMIT did succeed, runs nothing, and returns the stored
// result as this call's own. So does the call whose Retrier gave up on the
// transaction: it looks the key up once more, and its own completion (its
// execution's token) is its own result, not a replay.
//
// Failures are not kept (there is no KeepFailures): a failed transaction
// records nothing, so the next call runs fn again.
//
// # Outages
//
// A call waits for the server no longer than its context allows: a hung
// server, a connection reset in the middle of a reply, a server gone or
// replies slower than the deadline end the call with its context's error or
// the store's (retryable), within a few milliseconds of its deadline (the
// tests put a fault proxy between the store and PostgreSQL, and allow
// 100ms). Nothing acknowledged is lost: a call that failed may still have
// committed (its COMMIT's reply lost, or held by a hung server), and its
// retry with the same key replays it; no effect runs twice. Service comes
// back by itself: the pool replaces broken connections as calls need them,
// and calls succeed again within a second of the outage's end (measured
// with 300ms deadlines). Give the pool's URL a connect_timeout: pgxpool
// finishes a connection attempt in the background after its caller gave up,
// so without one, attempts to a server that never answers hold the pool's
// connections until TCP gives up.
//
// # Defaults
//
//	| setting         | default            | Config field |
//	|-----------------|--------------------|--------------|
//	| table           | retry_idempotency  | Table        |
//	| retention (Tx)  | 24h                | Retention    |
//	| max kept (Tx)   | 1 MiB              | —            |
//	| wait (Tx) for a | 30s, then the      | MaxWait      |
//	| key in progress | retryable          |              |
//	|                 | ErrInProgress      |              |
//
// (idempotency.Do, Once and the middleware pass their own lease and
// retention to the Store's methods; Tx takes no claim, so it has no lease.)
package postgres
