// Package policy holds a retry policy: plain data with documented zero values,
// and one pure method, Next, that decides after a failed attempt whether to
// retry and how long to wait first.
//
// Next takes everything it needs as arguments — the attempt's state, the
// classifier's decision and a random number — so the whole decision table is
// tested without a clock, and one Policy is safely shared by every goroutine.
//
// Zero values and defaults:
//
//	| field          | zero value means                                            |
//	|----------------|-------------------------------------------------------------|
//	| MaxAttempts    | 3 attempts (the first call and 2 retries)                   |
//	| MaxElapsed     | no limit on the time spent (the context's deadline applies) |
//	| AttemptTimeout | no per-attempt timeout                                      |
//	| MaxDelay       | 30s: the longest single wait; a longer Retry-After is        |
//	|                | returned to the caller instead of slept                     |
//	| Backoff        | backoff.Exponential{Base: 100ms, Factor: 2, MaxDelay: 10s}        |
//	| Jitter         | jitter.Full{}                                               |
//	| Strict         | false: an unrecognised error is retried ("unclassified")    |
//	| Idempotent     | false: a timed-out attempt is not retried without a key     |
//	| RequireKey     | false: calls need no idempotency key                        |
//
// Presets for the operations the source documents name:
//
//	| preset        | attempts | backoff (base → cap) | max delay | other                       |
//	|---------------|----------|----------------------|-----------|-----------------------------|
//	| LLMCall()     | 4        | 2s → 60s, full       | 60s       | strict                      |
//	| DBWrite()     | 4        | 100ms → 1s, full     | 1s        |                             |
//	| EmailSend()   | 4        | 1s → 10s, full       | 30s       |                             |
//	| Payment()     | 4        | 2s → 30s, full       | 60s       | strict, key required        |
//	| HealthCheck() | 1        | —                    | —         | never retries               |
//
// "4 attempts" is the first call and three retries.
package policy
