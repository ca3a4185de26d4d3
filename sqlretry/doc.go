// Package sqlretry retries whole database transactions: a serialization
// failure or a deadlock is retried from BEGIN, as AIP-194 asks of
// transactional requests ("application-level retry logic that retries the
// entire transaction block from the start"), and a COMMIT lost with its
// connection is reported as an ambiguous commit instead of being retried as
// if nothing had happened.
//
// Tx does it for database/sql, PgxTx for a pgx v5 pool. Each attempt begins a
// transaction with the caller's options (isolation level included), calls fn
// with the attempt's context and transaction, and commits; a failure rolls
// the transaction back and goes to the *retry.Retrier, which decides by its
// classifiers (classify.SQL's SQLSTATE table is in classify.Default) and its
// policy whether and when to begin again. A panic in fn rolls back and goes
// on up; it is not retried.
//
// Where a transaction failed changes what its failure means:
//
//	| failure                                         | what the Retrier sees                          |
//	|-------------------------------------------------|------------------------------------------------|
//	| BEGIN or fn fails, the server answered          | the error, classified as usual (40001, 40P01:  |
//	| (SQLSTATE)                                      | retry; 23, 22, 42: stop)                       |
//	| BEGIN or fn fails on a lost connection, a       | the error, retried without the "may still be   |
//	| shutdown (57P01) or the attempt's own timeout   | running" caution: the server rolls back a      |
//	| (retry.WithAttemptTimeout)                      | transaction whose session ended                |
//	| COMMIT answered with a SQLSTATE (40001 under    | the error, classified as usual: nothing        |
//	| SERIALIZABLE, a deferred constraint's 23xxx)    | committed                                      |
//	| COMMIT not sent (the attempt's or the caller's  | as before COMMIT: nothing committed            |
//	| context ended first)                            |                                                |
//	| COMMIT sent, then the connection lost (no       | an error matching ErrAmbiguousCommit, reason   |
//	| answer, 08xxx, 57P01, 57P02, 40003)             | "sql ambiguous commit", marked Timeout:        |
//	|                                                 | retried only if the Retrier is                 |
//	|                                                 | retry.Idempotent() or the context carries      |
//	|                                                 | retry.WithIdempotencyKey; otherwise the call   |
//	|                                                 | stops with retry.ErrNotIdempotent              |
//
// An error of fn's own (a business rule such as "insufficient funds") is
// classified by the Retrier like any other: a general Retrier retries what it
// does not recognise, so return such errors wrapped in classify.Permanent, or
// use retry.Strict(), under which only known transient failures are retried.
//
// fn may run several times. It must do its work through the transaction it is
// given; anything else it does (a message sent, a file written) is repeated.
// To make the effect of a keyed request exactly-once, complete the key in the
// same transaction: see package github.com/retrykit/retry/idempotency/postgres.
//
// # Defaults
//
//	| argument               | zero value                                          |
//	|------------------------|-----------------------------------------------------|
//	| opts (*sql.TxOptions)  | nil: the driver's defaults (READ COMMITTED on       |
//	|                        | PostgreSQL)                                          |
//	| opts (pgx.TxOptions)   | the zero value: the server's defaults               |
//	| ctx, r, db/pool, fn    | nil: a *retry.InvalidError, nothing runs            |
//
// # Compared with cockroach-go's crdb.ExecuteTx
//
// Its write-skew test is ported to this package's tests and passes (under
// SERIALIZABLE: CockroachDB's default, not PostgreSQL's). Where we differ:
//
//   - crdb retries inside one transaction with SAVEPOINT cockroach_restart,
//     which only CockroachDB supports; sqlretry begins a new transaction,
//     which works on any database.
//   - crdb calls every error of its final RELEASE that is not retryable
//     ambiguous, a deferred constraint violation included; sqlretry calls a
//     COMMIT ambiguous only when the server gave no answer (or one that says
//     the connection went), because an answer means nothing committed.
//   - crdb retries only errors it knows to be retryable (40001), at most 50
//     times, with no wait; sqlretry leaves the decision, the waits and the
//     bounds to the Retrier (so a general Retrier retries unrecognised errors;
//     see above).
//   - crdb's ambiguous commit is never retried; sqlretry retries it for keyed
//     or idempotent work, where repeating it is harmless by construction.
package sqlretry
