// Package httpretry retries HTTP requests: an http.RoundTripper (Transport)
// and a client constructor (NewClient) that run every request through a
// retry.Retrier, and a reader of server-sent events for streamed responses.
//
// The transport retries only requests that are safe to repeat: the idempotent
// methods (GET, HEAD, OPTIONS, PUT, DELETE, TRACE) and requests that carry an
// Idempotency-Key header (the key opens the retry loop's idempotency gate, so
// a timed-out attempt may be retried). A POST or PATCH without a key is sent
// once, as is a request whose body cannot be rewound (no GetBody); the
// reason is in the error (NotRetriedError) and in the log.
//
// An error status is classified like any failure: 429 and 503 honour
// Retry-After (seconds or HTTP-date), 502/503/504 are retried, 500 once,
// other 4xx never. When the loop gives up on a status, the transport returns
// that last response — body intact — and the reason is in ResultOf. A
// transport failure after the last attempt returns the *retry.Error, which
// says how many attempts were made and why it stopped. Every response it
// discards is drained (up to DrainLimit) and closed, so its connection is
// reused. (Below it, net/http's own Transport already resends an idempotent
// request — or one with an Idempotency-Key — once, when a reused connection
// closes before any response: such a hang-up costs no attempt here.)
//
// With WithBreakers and WithCooldowns the transport keeps a circuit breaker
// and a cooldown per (host, model) — the model is what WithModel reads from
// the request, empty by default.
//
// Logs and hook events never carry credentials or payloads: no headers, no
// bodies; URLs appear without their user information and with every query
// value replaced by "REDACTED".
//
//	| setting        | default                                              |
//	|----------------|------------------------------------------------------|
//	| base transport | http.DefaultTransport                                |
//	| Retrier        | retry.New() with its defaults                        |
//	| DrainLimit     | 64 KiB read from a discarded body before closing it  |
//	| breakers       | none                                                 |
//	| cooldowns      | none                                                 |
//	| model          | "" (one breaker and cooldown per host)               |
package httpretry
