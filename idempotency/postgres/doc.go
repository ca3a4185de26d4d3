// Package postgres keeps idempotency keys in a PostgreSQL table, through a
// pgx v5 pool, and makes a database effect exactly-once: Store.Tx runs the
// effect, completes its key and stores its result in one transaction, so
// that both commit or neither does — Brandur Leach's "atomic phases", the
// design of Stripe-like APIs.
//
//	pool, err := pgxpool.New(ctx, "postgres://…")
//	store, err := postgres.New(pool)
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
//	|                                       | + 2: Claim before it, the completion in it   |
//	| Store.Tx, replay                      | 1: Claim                                     |
//
// A claim that races a concurrent claim of the same key committing in the
// middle of it sees neither its own insert nor the other's row, and asks
// again: rarely two statements.
//
// # Exactly-once with Tx
//
// Tx claims the key (committed at once, with a lease), then runs the
// transaction through sqlretry.PgxTx: fn, the completion (an UPDATE fenced by
// the claim's token) and COMMIT. If the process dies anywhere before COMMIT,
// the server rolls back the effect and the completion together; the claim
// stays until its lease (WithLease, idempotency.DefaultLease by default)
// runs out, and the next call with the key runs fn. If the lease ran out
// while the transaction was still running and another call took the key,
// the completion changes no row and the transaction rolls back
// (idempotency.ErrClaimLost): only one of them commits. A COMMIT whose reply
// was lost is retried (the transaction is keyed): the retry finds the key
// completed by its own token if the COMMIT did succeed, runs nothing, and
// returns the stored result.
//
// Failures are not kept (there is no KeepFailures): a failed transaction
// releases the key, so that the next call runs fn again.
//
// # Defaults
//
//	| setting   | default                                   | option        |
//	|-----------|-------------------------------------------|---------------|
//	| table     | retry_idempotency                         | WithTable     |
//	| lease     | idempotency.DefaultLease (30s), Tx only   | WithLease     |
//	| retention | idempotency.DefaultRetention (24h), Tx    | WithRetention |
//	| max kept  | idempotency.DefaultMaxResultSize (1 MiB)  | —             |
//
// (idempotency.Do, Once and the middleware pass their own lease and retention
// to the Store's methods.)
package postgres
