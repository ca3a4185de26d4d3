// Package idempotency makes an operation safe to retry: repeating it cannot
// repeat its side effect. It gives one process, a fleet sharing a store, and
// HTTP servers and clients the semantics of Stripe's idempotency keys and of
// the IETF draft "The Idempotency-Key HTTP Header Field".
//
// # Keys and fingerprints
//
// A key names one logical call. It is chosen once — NewKey for a call with no
// identity, DeriveKey(run, step, fingerprint) for a step of a job, so that a
// resumed job replays instead of paying twice — and sent with every retry of
// the call. Keys are at most 255 characters without control characters
// (idempotency.ValidateKey), checked before anything is stored or sent.
//
// A Fingerprint is a hash of the request as the caller sends it, stored with
// the key. The same key with another fingerprint is ErrKeyReuse: never
// retried, and never answered by minting a new key, which for an unchanged
// request would run it twice.
//
// # Running at most once
//
// Do(ctx, store, key, fingerprint, fn) claims the key in a Store, runs fn,
// and stores its result for the retention window; later calls with the key
// get the stored result (Result.Replay, Result.ReplayOf: the id of the
// execution that did the work). A call that finds the key in progress waits
// for the first and returns its result. Once is Do for a side effect — send
// the email only if no earlier run succeeded.
//
// A claim has a lease, extended while fn runs: a crashed executor stops
// extending it, and the key is usable again when the lease runs out. Claims
// are fenced by a token, so a stale executor can neither extend, complete
// nor release a claim that expired or passed to another. When fn fails, the
// key is released (a retry runs fn again) or, with KeepFailures, the failure
// is kept for the window: which is right depends on whether the failure is
// worth repeating. A result larger than the retention cap is returned once,
// then reported as ErrNotRetained.
//
// # Stores
//
// Store is four atomic transitions: Claim, Extend, Complete, Release.
// MemoryStore is the bounded, expiring, in-process store; the Redis store is
// in the nested module github.com/retrykit/retry/idempotency/redis, so that
// its client library is not a dependency of this module. Package storetest
// checks any Store against the contract.
//
// # HTTP
//
// Middleware guards net/http handlers: 400 for a missing or bad key, 409
// while the first request with the key is in flight, 422 for the key reused
// with another request, the stored response (marked Idempotent-Replay) for a
// repeat, and RFC 9457 problem details for every error. On the client side,
// Transport sends the call's key with every attempt and waits out "in
// progress"; Classify tells the retry loop what each failure means; Client
// puts it all together.
//
// # Defaults
//
//	setting                     default                      option
//	lease of a claim            30s, extended every 10s      WithLease
//	retention of an outcome     24h                          WithRetention
//	retention cap               1 MiB                        WithMaxResultSize
//	a failure of fn             releases the key             KeepFailures
//	waiting for "in progress"   as long as the context       WithMaxWait
//	polling a store or server   10ms doubling to 500ms       WithPollInterval
//	guarded methods             POST, PATCH                  WithMethods
//	key on a guarded request    required (400 without)       KeyOptional
//	request body read           at most 1 MiB (413 above)    WithMaxRequestBody
//	fingerprint (middleware)    method, path, query, body    WithFingerprint
//	key scope (middleware)      one for all clients          WithScope
//	Retry-After with a 409      1s                           WithRetryAfter
//	memory store bounds         100,000 records, 64 MiB      WithMaxEntries, WithMaxBytes
//
// The lease is short so that a crashed executor frees its key within half a
// minute, and is extended every third of it, so that a live one keeps its key
// however long it works, through a missed extension or a store that is
// unreachable for a few seconds. The retention of 24
// hours is Stripe's and the gateway's window; the 1 MiB cap is the gateway's.
package idempotency
