// Package httpretry is the library's HTTP client: an http.RoundTripper
// (Transport, or NewClient for an *http.Client around one) that runs every
// request as one call of a retry.Retrier, and a reader of server-sent events
// for streamed responses (OpenSSE, for stream.Open).
//
//	client, err := httpretry.NewClient(r) // r: a *retry.Retrier, built once and shared
//	if err != nil {
//		return err
//	}
//	resp, err := client.Get(url)
//	if err != nil {
//		return err // the *retry.Error: no response came, or a stage refused the request
//	}
//	defer resp.Body.Close()
//
// The transport is a thin adapter: it sets each request's call key, turns
// each answer into an error the Retrier's classifiers read, and calls the
// Retrier. Everything else — the policy, breakers, cooldowns, the rate
// limiter, the retry budget, observers and logs — is the Retrier's, given to
// retry.New, and shared with every other call made through it.
//
// A caller that wants the call's attempts, waits and elapsed time asks for
// them in the request's context, in the way of net/http/httptrace:
//
//	var res httpretry.Result
//	ctx, err := httpretry.WithResult(ctx, &res) // filled in before RoundTrip returns
//	if err != nil {
//		return err
//	}
//
// # What is retried
//
// Only what is safe to repeat: the idempotent methods (GET, HEAD, OPTIONS,
// PUT, DELETE, TRACE) and requests that carry an idempotency key. A POST or
// PATCH without a key is sent once, as is a request whose body cannot be
// rewound (no GetBody: http.NewRequest sets it for in-memory bodies; the
// transport never reads a body into memory to make it rewindable). Such a
// request is an ordinary call of the Retrier with one attempt — its stages
// and observers see it — and the reason it was not retried is in the error
// (NotRetriedError). A timed-out attempt — the server may still be working
// on it — is retried only for an idempotent method or a keyed request.
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
// than the policy's MaxDelay is returned, not slept; "key reused" (409 or
// 422) and "result not retained" are never retried, and no new key is ever
// minted in their place.
//
// # Answers
//
// An error status is an error for the Retrier (a *classify.StatusError) and
// classified like any failure: 429 and 503 honour Retry-After (seconds or
// HTTP-date), 502/503/504 are retried, 500 once, other 4xx never. When the
// call ends without a success, what RoundTrip returns depends on why the
// loop stopped (policy.Stop):
//
//	| the loop stopped because (policy.Stop)              | RoundTrip returns                  |
//	|-----------------------------------------------------|------------------------------------|
//	| permanent, not-idempotent, max-attempts,            | the last attempt's error response, |
//	| class-limit, wait-too-long, elapsed, deadline,      | body intact, with a nil error; the |
//	| budget: decided on the last attempt's failure       | *retry.Error when no response came |
//	| key-required, limited (the rate limiter refused),   | the *retry.Error; a response an    |
//	| breaker-open (the breaker refused), canceled (the   | earlier attempt got is drained and |
//	| request's context ended)                            | closed                             |
//
// A cooldown too long to wait stops the call with wait-too-long (or elapsed,
// deadline): RoundTrip returns the last error response if an attempt got
// one, and the *retry.Error — its last error a *breaker.CooldownError, no
// request sent — if the key was cooling down before the first attempt. With
// a response, why the loop stopped is in the Result; the *retry.Error says
// how many attempts were made, and its Stop and Reason why. When the
// caller's context ends — during an attempt or a wait — the call returns the
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
// With WithHedging the transport hedges the requests it may repeat (an
// idempotent method, or a keyed request): a request still without a
// response after the hedging delay is sent again alongside, the first
// success is returned, the others are cancelled, and every response but the
// winner's is drained and closed. Each attempt works on its own copy of the
// request; a body is replayed with GetBody. A request sent once (a POST
// without a key) is not hedged. Hedges go through the Retrier's stages like
// every attempt (see retry.Hedger).
//
// # Breakers, cooldowns and keyed limits
//
// Each request's call key is breaker.Key{Target: its URL's host, Operation:
// the model WithModel reads} — empty by default. The Retrier's breakers
// (retry.WithBreakers) and cooldowns (retry.WithCooldowns) keep one state
// per key, and so does a limit.Keyed that reads it (limit.NewKeyed with
// breaker.KeyOf): a host (or a model on it) that fails or is throttled does
// not hold back another. A 503 with Retry-After starts its key's cooldown:
// requests to it wait until it ends, or fail without being sent when that
// is longer than they can wait. The transport sets the key only when a stage
// reads it (retry.Retrier.Keyed): its context value costs 2 allocations per
// request.
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
// The Retrier's observers and logger (retry.WithObserver, retry.WithLogger)
// hear every request: each attempt, wait, give-up, hedge, and the changes of
// its breakers and cooldowns. An error status reaches them as a
// *classify.StatusError — the status, the response's header (for its
// Retry-After) and the kind WithKind read — never with the request's URL,
// header or body, nor the response's body. The transport's own errors carry
// no credential or payload: URLs appear without their user information and
// with every query value replaced by "REDACTED" (Redact). Per-attempt HTTP
// metrics and traces (method, status, latency) belong below the transport:
// wrap the base transport (WithBase), for example with otelhttp.
//
// # Defaults
//
// The zero Transport is usable and means the same as New(r) with r from
// retry.New():
//
//	| setting        | default                                        | option               |
//	|----------------|------------------------------------------------|----------------------|
//	| base transport | http.DefaultTransport                          | WithBase             |
//	| retried        | idempotent methods and keyed requests          | a key, MintKeys      |
//	| keys           | the request's or its context's; none minted    | MintKeys             |
//	| drain limit    | 64 KiB read from a discarded body, then closed | WithDrainLimit       |
//	| error kinds    | none read (idempotency answers excepted)       | WithKind             |
//	| call key       | (host, "")                                     | WithModel            |
//	| hedging        | none                                           | WithHedging          |
//	| Result         | not reported                                   | WithResult (context) |
//
// A request that succeeds at once allocates nothing in the transport (with
// a Retrier whose stages read the call key, only the key's context value),
// and costs it a fraction of what go-retryablehttp and failsafe-go's failsafehttp
// cost: see bench/README.md.
//
// # A client, in full
//
//	func get(ctx context.Context, r *retry.Retrier, url string) (*http.Response, error) {
//		client, err := httpretry.NewClient(r) // an *http.Client whose transport runs every request through r
//		if err != nil {
//			return nil, err
//		}
//		var res httpretry.Result // attempts, waits, and why it stopped: filled in before Do returns
//		ctx, err = httpretry.WithResult(ctx, &res)
//		if err != nil {
//			return nil, err
//		}
//		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
//		if err != nil {
//			return nil, err
//		}
//		return client.Do(req)
//	}
//
// In detail:
//
//   - Retries only what is safe to repeat: GET, HEAD, OPTIONS, PUT, DELETE,
//     TRACE, and any request with an idempotency key — its Idempotency-Key
//     header or its context's (retry.WithIdempotencyKey), the same on every
//     attempt, checked before sending. httpretry.MintKeys() gives a keyless
//     POST a new key, for servers that honour the header; never by default. A
//     POST without a key, or a body without GetBody, is sent once — an ordinary
//     call of the Retrier with one attempt, which its stages and observers see —
//     and the error (*httpretry.NotRetriedError) says why.
//   - Speaks the idempotency protocol in the one retry loop: a 409 "in progress"
//     is waited out after its Retry-After, its waits in the Stats and capped by
//     MaxDelay like every wait; "key reused" and "not retained" are never
//     retried, and no new key replaces a refused one.
//   - Honours Retry-After (seconds and HTTP-date) on 429 and 503, and the
//     request's context and deadline: when the context ends, the call returns its
//     error, as http.Client does. An attempt timeout bounds the wait for the
//     response, never the caller's read of its body. It drains (up to 64 KiB) and
//     closes every response it discards. When the loop gives up on an error
//     status (a stop decided on the last attempt's failure: max-attempts,
//     permanent, wait-too-long, …) it returns that last response with its
//     body intact; when a stage refused the next attempt (limited,
//     breaker-open), the key was required or the context ended, it returns the
//     *retry.Error (one table over policy.Stop, in the package doc).
//   - The Retrier's breakers, cooldowns and keyed limiters see each request's call
//     key, breaker.Key{Target: host, Operation: model} (the model read by
//     WithModel); WithKind reads an API's own error code from the body, and
//     WithHedging(delay, maxInFlight) hedges the requests it may repeat.
//   - The Retrier's observers (retry.WithObserver) hear every attempt (an error
//     status is a *classify.StatusError in Event.Err) and its logger
//     (retry.WithLogger) every retry and give-up. Neither carries headers or
//     bodies; URLs appear without user information and with query values
//     redacted (httpretry.Redact). Per-attempt HTTP metrics (method, status,
//     latency) belong below the transport: WithBase(otelhttp.NewTransport(…)).
//   - The zero httpretry.Transport works with the defaults, like
//     http.Transport's. A request that succeeds at once allocates nothing in
//     the transport (setting the call key, for a Retrier whose stages read it,
//     costs its context value): its overhead over the bare transport is a third of
//     go-retryablehttp's and a ninth of failsafehttp's (bench/).
//   - Streams: stream.Open(ctx, r, open) retries a stream only until its first
//     chunk; a failure after it is a *stream.Error[T] carrying the partial
//     output (the first stream.MaxPartial chunks), never retried.
//     httpretry.OpenSSE opens a text/event-stream response, and its reader
//     turns an in-band error event into an *httpretry.EventError.
//
// go run ./examples/http-client shows all of it against a flaky local server.
package httpretry
