// Package policy holds a retry policy: plain data with documented zero values,
// and one pure method, Next, that decides after a failed attempt whether to
// retry and how long to wait first.
//
// A Policy holds numbers, flags, a schedule (package backoff) and a jitter
// (package jitter), all of them values: copying a Policy copies all of it.
// What keeps state lives elsewhere: a retry budget shared by many calls is in
// package budget, and the retry loop (retry.WithBudget) asks it after Next
// says Continue, so Next's answer depends on its arguments alone.
//
// Next takes everything it needs as arguments — the attempt's state, the
// classifier's decision and a random number — so the whole decision table is
// tested without a clock, and one Policy is safely shared by every goroutine.
//
// Zero values and defaults (a nil *Policy behaves as the zero Policy, except
// that Validate reports it):
//
//	| field          | zero value means                                                     |
//	|----------------|----------------------------------------------------------------------|
//	| MaxAttempts    | 3 attempts (the first call and 2 retries)                            |
//	| MaxElapsed     | no limit on the time spent (the context's deadline applies)          |
//	| AttemptTimeout | no per-attempt timeout                                               |
//	| MaxDelay       | 30s: the longest single wait; a longer Retry-After is                |
//	|                | returned to the caller instead of slept                              |
//	| Backoff        | DefaultBackoff(): Exponential{Base: 100ms, Factor: 2, MaxDelay: 10s} |
//	| Jitter         | jitter.Full{}                                                        |
//	| Strict         | false: an unrecognised error is retried ("unclassified")             |
//	| Idempotent     | false: a timed-out attempt is not retried without a key              |
//	| RequireKey     | false: calls need no idempotency key                                 |
//
// Presets for common operations:
//
//	| preset        | attempts | backoff (Base → MaxDelay) | MaxDelay | other                |
//	|---------------|----------|---------------------------|----------|----------------------|
//	| LLMCall()     | 4        | 2s → 60s, full jitter     | 60s      | strict               |
//	| DBWrite()     | 4        | 100ms → 1s, full jitter   | 1s       |                      |
//	| EmailSend()   | 4        | 1s → 10s, full jitter     | 30s      |                      |
//	| Payment()     | 4        | 2s → 30s, full jitter     | 60s      | strict, key required |
//	| HealthCheck() | 1        | —                         | —        | never retries        |
//
// "4 attempts" is the first call and three retries.
package policy
