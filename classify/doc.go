// Package classify decides whether a failed attempt may be retried.
//
// A classifier is a Func: it looks at an error and returns a Decision — retry,
// stop, or no opinion — with optional details: a server-requested wait
// (RetryAfter), a cap on how many times in a row that class of failure may be
// retried (Limit), and whether the failure was a timeout after which the
// operation may still be running (the retry loop then retries only idempotent
// or keyed work).
//
// Classifiers compose with Chain: the first one with an opinion wins. The retry
// package runs the caller's classifiers first, then Default, then a fallback
// for what nobody recognised: retry it, reported as "unclassified" (Reason
// ReasonUnclassified), or, in strict mode (retry.Strict), stop.
//
// Default recognises the whole table:
//
//	| failure                                             | decision                              |
//	|-----------------------------------------------------|---------------------------------------|
//	| an error a retry loop gave up on (Final)            | stop: retry in one layer              |
//	| ErrSpendCap: a quota, spending cap or billing limit | stop, whatever else is said           |
//	| Permanent(err) / Retryable(err) / WithRetryAfter    | stop / retry / retry after d          |
//	| context.Canceled                                    | stop: the caller gave up              |
//	| ErrUpstream: a gateway's "upstream error" (502)     | stop: the server already retried;     |
//	|                                                     | opt in to one extra attempt with      |
//	|                                                     | UpstreamOnce                          |
//	| HTTP 429, 503                                       | retry, after Retry-After when present |
//	| HTTP 502, 504                                       | retry                                 |
//	| HTTP 500 and unlisted 5xx                           | retry once per call (Limit 1)         |
//	| HTTP 501, 505, 506, 508, 510, 511                   | stop: the server cannot do it         |
//	| every other HTTP 4xx (400, 401, 403, 404, 409, …)   | stop: the request is wrong            |
//	| a database error with a SQLSTATE                    | the SQL table below                   |
//	| ECONNRESET, ECONNREFUSED, ECONNABORTED, EPIPE,      | retry                                 |
//	| ENETUNREACH, EHOSTUNREACH, a hang-up (unexpected    |                                       |
//	| EOF, or EOF in an HTTP client error), temporary DNS |                                       |
//	| a connect timeout: a dial or TLS handshake that     | retry, not marked Timeout: nothing    |
//	| timed out                                           | was sent                              |
//	| other timeouts (Timeout() == true,                  | retry, marked Timeout: the server     |
//	| context.DeadlineExceeded, …)                        | may still be running it               |
//	| a TLS certificate that fails verification           | stop: no attempt can succeed          |
//	| a request net/http refuses to send (scheme,         | stop: no attempt can succeed          |
//	| header, method, host), a redirect loop              |                                       |
//
// HTTP errors are recognised by the method HTTPStatusCode() int (StatusError
// has it, as do the AWS SDK's response errors) and Retry-After by the method
// RetryAfter() time.Duration. Errors are searched through Unwrap, both forms,
// without reflection or allocation. net/http reports some failures only as
// text (an unsupported scheme, an invalid header, a redirect loop, a TLS
// handshake timeout); those are matched exactly as net/http writes them, on
// the innermost error, never as a substring of some other message. That text
// is read only when no typed fact decided (so an error type whose Error method
// allocates costs that allocation then).
//
// The retry loop applies Final before the caller's classifiers too: an
// error that an inner retry loop already gave up on is never retried again.
//
// A successful result can be classified too (CheckResult): Completion encodes
// the rule that an LLM's empty content or content-filter finish is a final
// answer, never retried.
//
// # Database errors
//
// SQL recognises a database error by the method SQLState() string anywhere in
// the chain (pgx's *pgconn.PgError and lib/pq's *pq.Error have it), without
// importing a driver, and decides by this table:
//
//	| SQLSTATE                                  | decision                                      |
//	|-------------------------------------------|-----------------------------------------------|
//	| 40001 serialization_failure               | retry (the whole transaction)                 |
//	| 40P01 deadlock_detected                   | retry (the whole transaction)                 |
//	| 53300 too_many_connections                | retry, after the policy's backoff             |
//	| 55P03 lock_not_available                  | retry, after the policy's backoff             |
//	| 08001, 08004: could not connect, rejected | retry: nothing was sent                       |
//	| 57P03 cannot_connect_now                  | retry: nothing was sent                       |
//	| other class 08: connection lost           | retry, marked Timeout: only when nothing may  |
//	| 57P01, 57P02: admin or crash shutdown     | have committed (idempotent or keyed work, or  |
//	| 40003 statement_completion_unknown        | a transaction that never reached COMMIT)      |
//	| class 23 integrity constraint violation   | stop                                          |
//	| class 22 data exception                   | stop                                          |
//	| class 42 syntax error or access rule      | stop                                          |
//	| other class 40 (40000, 40002)             | stop: the transaction was rolled back for a   |
//	|                                           | reason a retry does not change                |
//	| any other SQLSTATE                        | no opinion: retried, or stopped when strict   |
//
// A lost connection is marked Timeout because a statement outside a
// transaction, or a COMMIT, may have taken effect before the connection went:
// the retry loop then retries only idempotent or keyed work. A failure inside a
// transaction before its COMMIT is different (the server rolls back what the
// session did not commit); package sqlretry, which knows where a transaction
// failed, retries those and reports a COMMIT whose outcome is unknown as an
// ambiguous commit.
//
// # Errors nobody recognised
//
// Libraries differ on them. hashicorp/go-retryablehttp retries every error but
// the few it knows to be hopeless; failsafe-go retries every error by default,
// as do cenkalti/backoff (unless marked Permanent) and avast/retry-go (unless
// marked Unrecoverable). The AWS SDKs' standard retryer does the opposite: an
// error none of its checks recognises is not retried. The retry loop takes the
// first side by default, because most unrecognised errors are an
// application's own transient ones; strict mode (retry.Strict) takes the
// second, for calls that cost money.
//
// # Compared with go-retryablehttp and failsafehttp
//
// Their policy tests, ported to this package's tests, agree with Default
// except where Default chose otherwise:
//
//   - HTTP 500 and unknown 5xx are retried once per call, not until attempts
//     run out: a server that fails twice the same way is not having a blip.
//   - HTTP 505, 506, 508, 510 and 511 stop, like 501: the server says it
//     cannot do what was asked, however often it is asked.
//   - Invalid header names and values stop (retryablehttp agrees; failsafehttp
//     retries them), and so does a *tls.CertificateVerificationError whatever
//     its text (failsafehttp looks only for x509.UnknownAuthorityError directly
//     inside a *url.Error, which Go has not returned since 1.20).
//   - A status below 400 is no failure, so there is no opinion on it
//     (retryablehttp retries a status of 0); ResponseError returns nil for it.
//   - A Retry-After date is honoured, not only delta-seconds (failsafehttp).
//   - The caller's own cancellation or expired deadline is recognised by the
//     retry loop before any classifier, as retryablehttp checks its context
//     first; Default alone sees a deadline as a timeout.
//
// # Which database errors are retried
//
// classify.Default reads the SQLSTATE of any error in the chain that has a
// method SQLState() string (pgx's *pgconn.PgError, lib/pq's *pq.Error):
// the root module imports no driver. classify.SQL applies the table alone.
//
//	| SQLSTATE | decision | reason |
//	| --- | --- | --- |
//	| 40001 serialization_failure, 40P01 deadlock_detected | retry (the whole transaction) | `sql serialization failure`, `sql deadlock` |
//	| 53300 too_many_connections, 55P03 lock_not_available | retry, after the policy's backoff | `sql too many connections`, `sql lock not available` |
//	| 08001, 08004 (could not connect, rejected), 57P03 cannot_connect_now | retry: nothing was sent | `sql cannot connect` |
//	| the rest of class 08 (connection lost), 57P01/57P02 (shutdown), 40003 | retry marked `Timeout`: only idempotent or keyed work, since the statement may have committed | `sql connection failure`, `sql server shutdown`, `sql statement completion unknown` |
//	| class 23 (integrity), 22 (data), 42 (syntax, privilege) | stop | `sql integrity violation`, `sql data exception`, `sql syntax error or access rule violation` |
//	| the rest of class 40 | stop | `sql transaction rolled back` |
//	| any other SQLSTATE | no opinion: the general default retries it, `retry.Strict()` stops | `unclassified` |
//
// For example:
//
//	// what classify.Default says of a *pgconn.PgError with Code "40001":
//	d := classify.SQLState("40001")
//	fmt.Println(d, d.Reason == classify.ReasonSerialization) // retry (sql serialization failure) true
package classify
