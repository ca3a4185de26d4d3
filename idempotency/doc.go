// Package idempotency makes an operation safe to retry: repeating it cannot
// repeat its side effect. It gives one process, a fleet sharing a store, and
// HTTP servers the semantics of Stripe's idempotency keys and of the IETF
// draft "The Idempotency-Key HTTP Header Field", and HTTP clients the
// protocol's helpers.
//
// # Keys and fingerprints
//
// A key names one logical call. It is chosen once — NewKey for a call with no
// identity, DeriveKey(run, step, fingerprint) for a step of a job, so that a
// resumed job replays instead of paying twice — and sent with every retry of
// the call. Keys are at most 255 characters without control characters
// (ValidateKey), checked before anything is stored or sent.
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
// Deadlines hold while the outcome is recorded. Once fn has returned, Do
// records its outcome whether or not the caller is still there, and waits
// for the store until ctx ends and 25ms more; a store slower than that
// finishes in the background, for at most the lease, and Do returns fn's
// result without waiting. A call with the key meanwhile waits for the record
// and replays it; a failure to record it is reported to WithObserver's
// observers. The middleware does the same with a request's context.
//
// # Stores
//
// Store is four atomic transitions: Claim, Extend, Complete, Release, on
// keys that belong to a scope (StoreKey; Do and Once use the empty one).
// NewMemoryStore returns the bounded, expiring, in-process store: it bounds what
// each scope holds, and refuses rather than forget a record before it
// expires. The Redis and PostgreSQL stores are in the nested modules
// github.com/retrykit/retry/idempotency/redis and …/idempotency/postgres, so
// that their client libraries are not dependencies of this module. Package
// storetest checks any Store against the contract.
//
// # HTTP servers
//
// Middleware guards net/http handlers: 400 for a missing or bad key, 409
// while the first request with the key is in flight, 422 for the key reused
// with another request (another method, host, path, query or body), the
// stored response (marked Idempotent-Replay) for a repeat, 429 for a client
// over its share of the store, and RFC 9457 problem details for every error.
// WithObserver reports what the middleware did with each request (an
// observe.Event of kind observe.Request, whose Detail is an Event), for
// metrics and traces.
//
// What is replayed: only a completed response. The handler returned
// normally; its body is as long as the Content-Length it declared, if it
// declared one; no write or flush of it failed; it did not answer a failure
// after its answer was sent (as a recovering middleware does after a
// panic); and a response without a Content-Length — a stream — was not cut
// off by its client leaving after it began and before the handler returned. The replay has the
// stored status, header fields, body and trailers, with a Content-Length
// equal to the handler's. Set-Cookie, Set-Cookie2, Authentication-Info,
// Proxy-Authentication-Info (WithUnstoredHeaders) and hop-by-hop fields are
// never stored, as header fields or as trailers: a replay answers the
// request again without opening a session.
//
// What is released, so that the client's retry runs the handler again: a
// response that is not complete; a handler that panicked, or that returned
// without answering once its request was done; a failure that a retry may
// cure — a 5xx, 408 or 429; and always an authentication failure (401, 403,
// 407), so that a retry with fresh credentials runs the handler. With
// KeepFailures the failures are stored and replayed instead — an incomplete
// response as a 500 problem of kind idempotency-response-incomplete, never
// as the fragment — except an authentication failure and a panic, which
// release the key still. A handler that must finish its work when its
// client leaves should declare its Content-Length: its response is then
// stored if it wrote it all, whoever was there to read it.
//
// Whose keys: each client's keys are its own. By default a request's key
// lives in a scope named by a digest of every credential it carries — its
// Authorization and Proxy-Authorization fields and its cookies
// (WithScopeCookies) — so that no client ever receives another's stored
// response, nor learns that another used a key. Requests without credentials
// are all one client. The cookies WithScopeCookies names are read as sent,
// so that a session value Go's cookie parser drops (a space, a quote, a byte
// beyond ASCII) still tells its clients apart. The middleware does not authenticate: the recommended
// scope is what the application authenticated, given to WithScope — the
// account that an authentication middleware placed before it stored in the
// request's context — so that a refreshed token does not make a retry
// another client's request. Identity carried elsewhere than the digest
// reads — an API key in X-Api-Key, the user an authenticating gateway names
// in X-Forwarded-User — is invisible to the default scope, which makes all
// such clients one: give WithScope the authenticated account, or the
// gateway's field if the gateway sets it on every request and removes any
// copy a client sent.
//
// The share rule: the memory store lets one client hold a tenth of it
// (MemoryConfig.ScopeShare), and answers 429 beyond. Under the default
// scope, a client is counted by its first credential — its first
// Authorization field, or else its first WithScopeCookies cookie — or, when
// it has none, by its address (an IPv6 client by its /64): junk cookies, a
// junk Proxy-Authorization or a second Authorization give a client another
// scope, never another share. A client whose first credential varies is as
// many clients as the application accepts: one that checks the credential
// refuses junk (a 401 releases the key); a public endpoint, which checks
// none, should scope by address with WithScope. Behind a proxy every address
// is the proxy's: there, WithScope is the rule. Under WithScope, a client is
// its scope. (The Redis store bounds no share: Redis's maxmemory does.)
//
// # HTTP clients
//
// The retrying HTTP client is package httpretry's. This package gives it,
// and any other client, the protocol: the header field HeaderKey, KeyOf to
// read and check a request's key, ResponseError to turn an error response
// and its problem kind into an error, Classify to tell the retry loop which
// of those to retry, and ReplayOf to tell a replay (the response fields
// Idempotent-Replay: true and Idempotent-Replay-Of: <execution id>) from a
// fresh execution.
//
// # Problem kinds
//
// The middleware answers every error with problem details (RFC 9457,
// application/problem+json) whose "kind" member says what went wrong, and
// whose "type" is https://pkg.go.dev/github.com/retrykit/retry/idempotency#
// followed by the kind's name below. ResponseError reads the kind from
// either, or from the "code" member of an error body, as LLM gateways send
// it (the first three kinds are their names).
//
//	kind                                status  name                  meaning
//	idempotency-in-progress             409     KindInProgress        a request with the key is still being processed;
//	                                                                  retryable: wait (Retry-After) and send it again
//	                                                                  to collect its result (ErrInProgress)
//	idempotency-key-reuse               422     KindKeyReuse          the key was used with another request (the
//	                                                                  gateway sends 409); never retried, never
//	                                                                  answered by a new key (ErrKeyReuse)
//	idempotency-response-not-retained   409     KindNotRetained       the first request succeeded, but its response
//	                                                                  was larger than the retention cap: there is
//	                                                                  nothing to replay (ErrNotRetained)
//	idempotency-key-missing             400     KindKeyMissing        the route requires an Idempotency-Key
//	                                                                  (retry.ErrKeyRequired)
//	idempotency-key-invalid             400     KindKeyInvalid        the key is longer than 255 characters, contains
//	                                                                  control characters, is a malformed quoted
//	                                                                  string or is sent more than once
//	                                                                  (retry.ErrInvalid)
//	idempotency-request-too-large       413     KindRequestTooLarge   the body is larger than the middleware reads to
//	                                                                  fingerprint a request (WithMaxRequestBody)
//	idempotency-store-unavailable       503     KindStoreUnavailable  the store failed, or is full; nothing was run;
//	                                                                  retryable
//	idempotency-scope-full              429     KindScopeFull         the client holds as many keys as its share of
//	                                                                  the store allows until some expire; nothing
//	                                                                  was run; other clients are unaffected
//	                                                                  (ErrScopeFull)
//	idempotency-response-incomplete     500     KindResponseIncomplete
//	                                                                  with KeepFailures: the first request ran, but
//	                                                                  its response was cut off; it may have taken
//	                                                                  effect, and there is nothing to replay; never
//	                                                                  retried (ErrStoredFailure)
//
// # Options
//
// Do, Once and Middleware take Options; the memory store takes a
// MemoryConfig, whose zero value is the default store. WithLease,
// WithRetention, WithMaxResultSize, KeepFailures and WithObserver configure
// all three functions; WithMaxWait and WithPollInterval only Do and Once; the
// others only Middleware. A bad value, or an option given where it means nothing,
// is a *retry.InvalidError naming the option (or the MemoryConfig field) and
// its value, returned before any work.
//
// # Defaults
//
//	setting                       default                                    option
//	lease of a claim              30s, extended every 10s                    WithLease
//	retention of an outcome       24h                                        WithRetention
//	retention cap                 1 MiB                                      WithMaxResultSize
//	a failure of the work         releases the key                           KeepFailures
//	waiting for "in progress"     as long as the context                     WithMaxWait
//	polling a store               10ms doubling to 500ms                     WithPollInterval
//	guarded methods               POST, PATCH                                WithMethods
//	key on a guarded request      required (400 without)                     KeyOptional
//	request body read             at most 1 MiB (413 above)                  WithMaxRequestBody
//	fingerprint (middleware)      method, host, path, query, body            WithFingerprint, WithHostAliases
//	key scope (middleware)        a digest of Authorization,                 WithScope, WithScopeCookies
//	                              Proxy-Authorization and cookies
//	never stored nor replayed     Set-Cookie, Set-Cookie2,                   WithUnstoredHeaders
//	(header fields and trailers)  Authentication-Info,
//	                              Proxy-Authentication-Info
//	an incomplete response        releases the key                           KeepFailures (a 500 problem)
//	401, 403, 407                 release the key, even with KeepFailures    -
//	Retry-After (409, 429, 503)   1s                                         WithRetryAfter
//	observation                   none                                       WithObserver
//	recording an outcome          until ctx ends + 25ms, then in the         -
//	                              background for at most the lease
//	memory store bounds           100,000 records, 64 MiB; full: refuses     MemoryConfig.MaxEntries, .MaxBytes
//	memory store, each client     a tenth of it: 10,000 records, 6.4 MiB     MemoryConfig.ScopeShare
//	(middleware)                  counted by first credential, or address
//
// The lease is short so that a crashed executor frees its key within half a
// minute, and is extended every third of it, so that a live one keeps its key
// however long it works, through a missed extension or a store that is
// unreachable for a few seconds. The retention of 24 hours is Stripe's and
// the gateway's window; the 1 MiB cap is the gateway's. The credentials'
// digest is the default scope because the middleware cannot know who is
// authenticated, but can tell that two requests do not carry the same
// credentials: a service that knows its accounts should give WithScope the
// account, so that a refreshed token does not turn a retry into another
// client's request. The share of a tenth, counted by a client's first
// credential or its address, lets one client fill no more than a tenth of
// the memory store, whatever else it sends. The host is in the fingerprint
// so that a server answering for several hosts never replays one host's
// response on another.
//
// # The pieces, in short
//
// A retry is safe only when repeating the operation cannot repeat its side
// effect. idempotency.Do(ctx, store, key, fingerprint, fn) runs fn at most
// once per key within the retention window; concurrent callers wait for the
// first and get its result, marked as a replay with the original execution's id
// (Result.Replay, Result.ReplayOf). The same key with a different request is
// ErrKeyReuse — never retried, and never answered by minting a new key; a
// result above the cap is returned once, then reported as ErrNotRetained. A
// crashed executor's claim expires after its lease (renewed while the work
// runs); claims are fenced by a token, so a stale executor cannot overwrite a
// newer result. idempotency.Once runs a side effect ("send the email") only if
// no earlier run of the key succeeded. Keys: NewKey (once per logical call),
// DeriveKey(run, step, fingerprint…) for resumable jobs, validated before use
// (ValidateKey).
//
// Stores: the in-process store of NewMemoryStore(idempotency.MemoryConfig{}) (sharded, bounded, expiring; each
// client's scope may hold a tenth of it, and it refuses rather than forget a
// record before its time), and Redis in the nested module idempotency/redis
// (one Lua script per transition, Cluster-safe; its doc says which Redis
// persistence it needs — AOF with appendfsync always kept every claim across
// a SIGKILL of redis-server, while without persistence 20 of 20 in-flight keys
// ran twice); idempotency/storetest is the conformance suite any store runs.
//
// On the server, idempotency.Middleware answers 400 (no key), 409 (in
// flight), 422 (key reused with another payload), 429 (a client over its share
// of the store), replays completed responses with Idempotent-Replay: true,
// and reports errors as RFC 9457 problem details. Clients are kept apart by
// default: a key lives in a scope named by a digest of the request's
// Authorization, Proxy-Authorization and cookies, so no client receives
// another's response or learns that it used a key (WithScope for the
// authenticated account; WithScope returning "" for a single-tenant
// service). A replay never carries Set-Cookie (WithUnstoredHeaders), and
// 401/403/407 release the key like a 5xx does. WithObserver reports each
// request (an observe.Request event whose Detail is an idempotency.Event:
// its outcome, status and key). On the client, httpretry speaks the protocol: one key per
// logical call (the request's, its context's, or with httpretry.MintKeys() a
// new one), a 409 "in progress" waited out inside the one retry loop, and "key
// reused" and "not retained" never retried; this package gives it HeaderKey,
// KeyOf, ResponseError, Classify and ReplayOf. go run
// ./examples/idempotent-server serves POST /orders behind the middleware;
// its README (examples/idempotent-server/README.md) walks through it with curl.
package idempotency
