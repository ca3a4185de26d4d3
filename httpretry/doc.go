// Package httpretry is the library's HTTP client: an http.RoundTripper
// (Transport, or NewClient for an *http.Client around one) that runs every
// request through the retry loop of a retry.Retrier, and a reader of
// server-sent events for streamed responses (OpenSSE, for stream.Open).
//
//	client, err := httpretry.NewClient(httpretry.WithRetrier(r))
//	resp, err := client.Get(url)
//
// A caller that wants the call's attempts, waits and elapsed time asks for
// them in the request's context, in the way of net/http/httptrace:
//
//	var res httpretry.Result
//	ctx, err := httpretry.WithResult(ctx, &res) // filled in before RoundTrip returns
//
// # What is retried
//
// Only what is safe to repeat: the idempotent methods (GET, HEAD, OPTIONS,
// PUT, DELETE, TRACE) and requests that carry an idempotency key. A POST or
// PATCH without a key is sent once, as is a request whose body cannot be
// rewound (no GetBody: http.NewRequest sets it for in-memory bodies; the
// transport never reads a body into memory to make it rewindable). The reason
// is in the error (NotRetriedError), the hook (Attempt.Once) and the log
// (WithLogger). A timed-out attempt — the server may still be working on it
// — is retried only for an idempotent method or a keyed request.
//
// # Idempotency keys
//
// A request's key is one per logical call — one RoundTrip — and goes with
// every attempt: the request's Idempotency-Key header (idempotency.HeaderKey,
// checked before sending: at most 255 characters, no control characters), or
// its context's (retry.WithIdempotencyKey), set in the header of each attempt;
// the caller's request is never modified. With MintKeys, and only then, a
// request that is not idempotent by its method and has no key gets a new one
// (idempotency.NewKey) — for servers that honour the header. For a keyed
// request the transport reads the server's idempotency answers
// (idempotency.ResponseError, idempotency.Classify): a 409 "in progress" is
// retried within the same loop after the server's Retry-After, so its waits
// are in the call's Stats and bounded like every wait — a Retry-After longer
// than the policy's MaxDelay is returned, not slept; "key reused" and
// "result not retained" are never retried, and no new key is ever minted in
// their place.
//
// # Answers
//
// An error status is classified like any failure: 429 and 503 honour
// Retry-After (seconds or HTTP-date), 502/503/504 are retried, 500 once,
// other 4xx never. When the loop gives up on a status, the transport returns
// that last response — body intact — and the reason is in the Result. A
// transport failure after the last attempt returns the *retry.Error, which
// says how many attempts were made and why it stopped. When the caller's
// context ends — during an attempt or a wait — the call returns the
// context's error (a *retry.Error that matches it), as http.Client does,
// never a stale error response. Every response the transport discards is
// drained (up to the drain limit) and closed, so its connection is reused.
// Below it, net/http's own Transport already resends an idempotent request
// — or one with an Idempotency-Key — once, when a reused connection closes
// before any response: such a hang-up costs no attempt here.
//
// # Attempt timeouts
//
// retry.WithAttemptTimeout bounds each attempt's wait for the response's
// header and, for an error response, the part of its body the transport
// reads (WithKind, idempotency answers) — never the caller's read of a
// response handed back: that body stays readable until the caller closes it
// or its own context ends.
//
// # Hedging
//
// Given a hedging Retrier (retry.WithHedging, built with retry.Idempotent),
// the transport hedges the requests it may repeat: a request still without a
// response after the hedging delay is sent again alongside, the first
// success is returned, the others are cancelled, and every response but the
// winner's is drained and closed. A body is replayed with GetBody. A request
// sent once (a POST without a key) is not hedged either. Breakers
// (WithBreakers) run attempts one at a time: New refuses them with a hedging
// Retrier.
//
// # Redirects, cancellation and streams
//
// http.Client follows redirects above the transport: each hop is one call,
// retried on its own, and a redirect is a success, not a failure (too many
// redirects is the client's error, never retried). A request whose context is
// already done is not sent. stream.Open with OpenSSE retries a stream only
// until its first event.
//
// # Observation
//
// WithHook hears every attempt (Attempt: method, status or error, why a
// request is sent once); WithLogger logs the requests sent once that failed.
// The Retrier's hook and logger (retry.WithHook, retry.WithLogger) hear the
// waits and give-ups; a breaker reports through its Settings.OnStateChange,
// cooldowns through CooldownSettings.OnCooldown. None of them carries a
// credential or a payload: no headers, no bodies; URLs appear without their
// user information and with every query value replaced by "REDACTED"
// (Redact).
//
// # Breakers and cooldowns
//
// With WithBreakers and WithCooldowns the transport keeps a circuit breaker
// (outside the retry loop) and a cooldown per (host, model) — the model is
// what WithModel reads from the request, empty by default.
//
// # Defaults
//
// The zero Transport is usable and means the same as New():
//
//	| setting        | default                                        | option               |
//	|----------------|------------------------------------------------|----------------------|
//	| base transport | http.DefaultTransport                          | WithBase             |
//	| retry policy   | retry.New(): 3 attempts, 30s MaxDelay, …       | WithRetrier          |
//	| retried        | idempotent methods and keyed requests          | a key, MintKeys      |
//	| keys           | the request's or its context's; none minted    | MintKeys             |
//	| drain limit    | 64 KiB read from a discarded body, then closed | WithDrainLimit       |
//	| error kinds    | none read (idempotency answers excepted)       | WithKind             |
//	| breakers       | none                                           | WithBreakers         |
//	| cooldowns      | none                                           | WithCooldowns        |
//	| model          | "" (one breaker and cooldown per host)         | WithModel            |
//	| observation    | no hook, no log                                | WithHook, WithLogger |
//	| Result         | not reported                                   | WithResult (context) |
//
// A request that succeeds at once allocates nothing in the transport, and
// costs it a fraction of what go-retryablehttp and failsafe-go's failsafehttp
// cost: see bench/README.md.
package httpretry
