// Package classify decides whether a failed attempt may be retried.
//
// A classifier is a Func: it looks at an error and returns a Decision — retry,
// stop, or no opinion — with optional details: a server-requested wait
// (RetryAfter), a cap on how many times in a row that class of failure may be
// retried (Limit), and whether the failure was a timeout, after which the
// operation may still be running (the retry loop then retries only idempotent
// or keyed work).
//
// Classifiers compose with Chain: the first one with an opinion wins. The retry
// package runs the caller's classifiers first, then Default, then a fallback
// for what nobody recognised: General (retry it, reported as "unclassified",
// as every mainstream library does) or, in strict mode, Strict (stop).
//
// Default recognises the whole table of the source documents:
//
//	| failure                                              | decision                               |
//	|------------------------------------------------------|----------------------------------------|
//	| an error a retry loop gave up on (Final)           | stop: retry in one layer               |
//	| ErrSpendCap: a quota, spending cap or billing limit  | stop, whatever else is said            |
//	| Permanent(err) / Retryable(err) / WithRetryAfter     | stop / retry / retry after d           |
//	| context.Canceled                                     | stop: the caller gave up               |
//	| ErrUpstream: a gateway's "upstream error" (502)      | stop: the server already retried;      |
//	|                                                      | opt in to one extra attempt with       |
//	|                                                      | UpstreamOnce                           |
//	| HTTP 429, 503                                        | retry, after Retry-After when present  |
//	| HTTP 502, 504                                        | retry                                  |
//	| HTTP 500 and unlisted 5xx                            | retry once per call (Limit 1)          |
//	| HTTP 501, 505, 506, 508, 510, 511                    | stop: the server cannot do it          |
//	| every other HTTP 4xx (400, 401, 403, 404, 409, …)    | stop: the request is wrong             |
//	| ECONNRESET, ECONNREFUSED, ECONNABORTED, EPIPE,       | retry                                  |
//	| ENETUNREACH, EHOSTUNREACH, a hang-up (unexpected     |                                        |
//	| EOF, or EOF in an HTTP client error), temporary DNS  |                                        |
//	| timeouts (Timeout() == true, DeadlineExceeded, …)    | retry, marked Timeout                  |
//
// HTTP errors are recognised by the method HTTPStatusCode() int (StatusError
// has it, as do the AWS SDK's response errors) and Retry-After by the method
// RetryAfter() time.Duration. Errors are searched through Unwrap, both forms,
// without reflection or allocation.
//
// The retry loop applies Final before the caller's classifiers too: an
// error that an inner retry loop already gave up on is never retried again.
//
// A successful result can be classified too (ResultFunc): Completion encodes
// the rule that an LLM's empty content or content-filter finish is a final
// answer, never retried.
package classify
