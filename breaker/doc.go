// Package breaker puts a circuit breaker (github.com/sony/gobreaker/v2) and a
// cooldown registry around the retry loop, the way the source documents
// prescribe: retries handle a blip, a breaker handles a dependency that is
// down, and a cooldown stops asking a server that already said when to come
// back.
//
// # Placement
//
// Outside (the default, and the recommended placement): the breaker sees one
// logical call — the whole retried call — and counts its outcome once. While
// it is open a call is rejected at once: the operation is not invoked, no
// retry or sleep happens, and the error matches ErrOpen. Use it for a
// dependency whose failures are retried anyway: the breaker decides "should
// we try this dependency at all", the retry loop "this request failed, again?".
//
// PerAttempt: every attempt goes through the breaker, and every attempt's
// outcome counts. Use it when the breaker protects a resource that each
// attempt consumes (a connection pool, a rate-limited quota), or when several
// callers with different retry policies share one breaker and their attempts
// must weigh the same. A rejection ends the retry loop (it is permanent for
// the call).
//
// Either way the breaker counts as a failure exactly what the Retrier would
// retry (its Classify): a timeout, a reset, a 503 — never a 400 the caller
// caused, which counts as a success (the dependency answered). A call the
// caller cancelled is not counted at all.
//
// # Defaults
//
//	| setting     | zero value means                                                 |
//	|-------------|------------------------------------------------------------------|
//	| MaxRequests | 1 probe while half-open; that many successes close the breaker   |
//	| Interval    | counts are cleared only when the state changes                   |
//	| Timeout     | 60s open before going half-open (gobreaker's default)            |
//	| ReadyToTrip | open after more than 5 consecutive failures (gobreaker's default) |
//	| placement   | outside the retry loop                                           |
//
// Cooldowns, keyed by (host, model) or any comparable key, remember a 503 with
// Retry-After: later calls for that key fail locally, with a *CooldownError
// that says so and until when, instead of spending a request to be told the
// same. Their zero values: 10,000 keys at most; a Retry-After longer than an
// hour is held for an hour.
//
// Each component reports through its own hook, the way gobreaker does:
// Settings.OnStateChange hears every change of a breaker's state, and
// CooldownSettings.OnCooldown every cooldown that starts; (*Breaker).State and
// Counts read a breaker at any time, for health endpoints and metrics. The
// retry loop's hook and logger (retry.WithHook, retry.WithLogger) see the
// attempts inside. With many instances,
// the nested module github.com/retrykit/retry/breaker/redis keeps the
// breaker's state in Redis so that a fleet opens together.
package breaker
