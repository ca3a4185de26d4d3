package idempotency

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/observe"
)

// Middleware returns a net/http middleware that makes the requests it guards
// — POST and PATCH by default (WithMethods) — safe to retry, keyed by their
// Idempotency-Key header within their client's scope:
//
//	no key (unless KeyOptional), or a bad one  400 problem
//	a body over WithMaxRequestBody             413 problem
//	the first request with a key               the handler runs; its response is stored
//	                                           if it completed, else the key is released
//	a repeat of a completed request            the stored status, headers, body and
//	                                           trailers, with Idempotent-Replay: true
//	                                           and Idempotent-Replay-Of: <execution id>
//	a repeat while the first is in flight      409 problem, kind idempotency-in-progress,
//	                                           with Retry-After
//	the same key with a different request      422 problem, kind idempotency-key-reuse
//	a repeat of a response over the cap        409 problem, kind idempotency-response-not-retained
//	a client over its share of the store       429 problem, kind idempotency-scope-full,
//	                                           with Retry-After
//	the store failing, or full                 503 problem, with Retry-After
//
// Errors are problem details (RFC 9457, application/problem+json) with a
// "kind" member (see Problem kinds in the package documentation). A request
// is the same as an earlier one when their fingerprints match
// (WithFingerprint; by default the method, host, path, query and body
// bytes; WithHostAliases).
//
// Clients are kept apart by default. A key lives in its client's scope, and
// the default scope is a digest of the request's credentials — its
// Authorization, Proxy-Authorization and cookies (WithScopeCookies) — so a
// request with other credentials never gets another client's response, nor
// a 422 that would tell it another client used the key: for it the key is
// new. Requests without credentials are all one client. The middleware does
// not authenticate; it only keeps apart what the request says about who
// sends it. Its records count against the share of the client's first
// credential — its first Authorization, or else its first WithScopeCookies
// cookie — or, without one, of its address (StoreKey.Owner), so that what
// else a client varies makes other scopes but never another share.
// WithScope, the recommended form, replaces the digest with the caller's
// notion of a client — the authenticated account, so that a client whose
// token was refreshed between two retries still gets its replay, and whose
// share is its own — or, returning "", with one scope for all (a
// single-tenant service). The scope is part of the store key, not of the
// fingerprint.
//
// The first response is streamed to its client as the handler writes it,
// and recorded up to the retention cap, without the header fields that are a
// session's rather than the response's (Set-Cookie and the others of
// WithUnstoredHeaders), as header fields or trailers, and without hop-by-hop
// fields. It is stored only if it completed: the handler returned normally;
// the body is as long as the Content-Length the handler declared, if any; no
// write or flush failed; no failure status was written after the response
// was sent (a recovered panic); and a response without a Content-Length was
// not cut off by its client leaving after it began and before the handler
// returned. An incomplete response releases the key, so that the retry runs
// the handler again; with KeepFailures it is stored as a 500 problem of kind
// idempotency-response-incomplete instead — never as the fragment. A
// response with status 5xx, 408 or 429 is a failure: it releases the key so
// that the client's retry runs the handler again (or, with KeepFailures, is
// stored and replayed like any other). An authentication failure — 401, 403
// or 407 — always releases the key, so that a retry with fresh credentials
// runs the handler. A handler that panics, or that returns without answering
// once its request's context is done, releases the key. A replay's
// Content-Length is that of the stored body, which is the one the handler
// declared; a replay with trailers is sent chunked.
//
// A nil store, or a bad option, is a *retry.InvalidError. The middleware
// given a nil handler answers every guarded request it would run with 500.
func Middleware(s Store, opts ...Option) (func(http.Handler) http.Handler, error) {
	if s == nil {
		return nil, argerr.New("idempotency.Middleware", nil, "the store must not be nil")
	}
	c, err := newMiddlewareConfig(opts)
	if err != nil {
		return nil, err
	}
	return func(next http.Handler) http.Handler {
		if next == nil {
			next = http.HandlerFunc(noHandler)
		}
		return &guard{c: c, s: s, next: next}
	}, nil
}

func noHandler(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "idempotency: no handler behind the middleware", http.StatusInternalServerError)
}

type guard struct {
	c    *config
	s    Store
	next http.Handler
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if w == nil || r == nil || r.URL == nil {
		return // not a request net/http would serve: nothing to answer
	}
	if !slices.Contains(g.c.methods, r.Method) {
		g.next.ServeHTTP(w, r)
		return
	}
	key, err := KeyOf(r.Header)
	var bad *retry.InvalidError
	switch {
	case errors.As(err, &bad):
		g.refuse(w, r, Event{Outcome: outcomeRejected, Status: http.StatusBadRequest}, kindKeyInvalid,
			"the Idempotency-Key header is invalid: "+bad.Err.Error(), 0)
		return
	case key == "" && g.c.keyOptional:
		g.next.ServeHTTP(w, r)
		return
	case key == "":
		g.refuse(w, r, Event{Outcome: outcomeRejected, Status: http.StatusBadRequest}, kindKeyMissing,
			"this request needs an Idempotency-Key header", 0)
		return
	}
	body, ok := g.readBody(w, r, key)
	if !ok {
		return
	}
	g.serve(w, r, g.c.storeKey(r, key), g.c.fingerprintOf(r, body), body)
}

// serve claims the key and runs the handler, or answers from the record.
func (g *guard) serve(w http.ResponseWriter, r *http.Request, key StoreKey, fp Fingerprint, body []byte) {
	claim := Record{Status: InProgress, Token: rand.Text(), Fingerprint: fp}
	rec, claimed, err := g.s.Claim(r.Context(), key, claim, g.c.lease)
	switch {
	case errors.Is(err, ErrScopeFull):
		g.refuse(w, r, Event{Outcome: outcomeScopeFull, Status: http.StatusTooManyRequests, Key: key.Key, Err: err}, kindScopeFull,
			"this client holds as many idempotency keys as it may until some expire; nothing was run", g.c.retryAfter)
	case err != nil:
		g.refuse(w, r, Event{Outcome: outcomeStoreFailed, Status: http.StatusServiceUnavailable, Key: key.Key, Err: err}, kindStoreUnavailable,
			storeFailure(err), g.c.retryAfter)
	case claimed:
		g.run(w, r, key, claim, body)
	default:
		g.answer(w, r, key.Key, rec, fp, body)
	}
}

func storeFailure(err error) string {
	if errors.Is(err, ErrFull) {
		return "the idempotency store is full; nothing was run"
	}
	return "the idempotency store failed; nothing was run"
}

// run executes the handler under the claim, streaming its response to the
// client and recording it.
func (g *guard) run(w http.ResponseWriter, r *http.Request, key StoreKey, claim Record, body []byte) {
	rw := newRecorder(w, r, g.c.maxResult, g.c.unstored)
	// The outcome is recorded, or the key released, by execute; a store
	// failure at that point cannot change a response already sent. It is
	// reported once recorded: from the background when the request's
	// context ended before the store answered.
	executed := func(err error) {
		e := Event{Outcome: outcomeExecuted, Status: rw.status, Key: key.Key, Execution: claim.Token}
		var ierr *Error
		if errors.As(err, &ierr) {
			e.Err = ierr // the store failed to record or release it
		}
		g.report(r, e)
	}
	_, pending, err := g.c.execute(r.Context(), g.s, key, claim, func(ctx context.Context) (output, error) {
		req := r.WithContext(ctx)
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		g.next.ServeHTTP(rw, req)
		return rw.outcome(ctx)
	}, executed)
	if !pending {
		executed(err)
	}
}

var (
	errHandlerFailed = errors.New("handler answered with a failure status")
	errAuthFailed    = errors.New("handler refused the request's credentials")
)

// failedStatus reports a response that says the request may succeed if sent
// again, which must not be replayed in its place.
func failedStatus(code int) bool {
	return code >= 500 || code == http.StatusRequestTimeout || code == http.StatusTooManyRequests
}

// authFailure reports a response about the request's credentials rather than
// the request: another try with other credentials is another request.
func authFailure(code int) bool {
	return code == http.StatusUnauthorized || code == http.StatusForbidden || code == http.StatusProxyAuthRequired
}

// answer responds from a record this request did not claim.
func (g *guard) answer(w http.ResponseWriter, r *http.Request, key string, rec Record, fp Fingerprint, body []byte) {
	e := Event{Key: key, Execution: rec.Token}
	switch {
	case rec.Fingerprint != fp && !g.c.legacyMatch(rec.Fingerprint, r, body):
		e.Outcome, e.Status = outcomeKeyReuse, http.StatusUnprocessableEntity
		g.refuse(w, r, e, kindKeyReuse,
			"this Idempotency-Key was used with a different request; send the original request unchanged, or a new key for a new request", 0)
	case rec.Status == InProgress:
		e.Outcome, e.Status = outcomeInProgress, http.StatusConflict
		g.refuse(w, r, e, kindInProgress,
			"a request with this Idempotency-Key is in progress; retry after the wait to get its response", g.c.retryAfter)
	case rec.Status == NotRetained:
		e.Outcome, e.Status = outcomeNotRetained, http.StatusConflict
		g.refuse(w, r, e, kindNotRetained,
			"the request with this Idempotency-Key succeeded, but its response was too large to keep for replay", 0)
	default:
		g.replay(w, r, e, rec)
	}
}

// replay answers with the stored response, leaving out the fields that must
// not be replayed even if a record written elsewhere kept them.
func (g *guard) replay(w http.ResponseWriter, r *http.Request, e Event, rec Record) {
	resp, err := decodeResponse(rec.Value)
	if err != nil {
		e.Outcome, e.Status, e.Err = outcomeStoreFailed, http.StatusServiceUnavailable, err
		g.refuse(w, r, e, kindStoreUnavailable, "the stored response is unreadable", g.c.retryAfter)
		return
	}
	h := w.Header()
	trailers := false
	for name, values := range resp.header {
		if g.c.storable(name) {
			h[name] = values
			trailers = trailers || strings.HasPrefix(name, http.TrailerPrefix)
		}
	}
	h.Set(headerReplay, "true")
	h.Set(headerReplayOf, rec.Token)
	if !trailers { // with trailers, HTTP/1.1 sends the body chunked
		h.Set("Content-Length", strconv.Itoa(len(resp.body)))
	}
	w.WriteHeader(resp.status)
	_, _ = w.Write(resp.body)
	e.Outcome, e.Status = outcomeReplayed, resp.status
	g.report(r, e)
}

// refuse answers with problem details of e.Status and reports e.
func (g *guard) refuse(w http.ResponseWriter, r *http.Request, e Event, kind, detail string, retryAfter time.Duration) {
	writeProblem(w, e.Status, kind, detail, retryAfter)
	g.report(r, e)
}

// report tells the observers what the middleware did with r.
func (g *guard) report(r *http.Request, e Event) {
	if len(g.c.observers) == 0 {
		return
	}
	oe := observe.Event{Kind: observe.Request, Err: e.Err, Detail: e}
	for _, o := range g.c.observers {
		o.Observe(r.Context(), oe)
	}
}

// readBody reads the whole body, up to the limit; it answers the request
// itself and reports false when it cannot.
func (g *guard) readBody(w http.ResponseWriter, r *http.Request, key string) ([]byte, bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, true
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.c.maxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		g.refuse(w, r, Event{Outcome: outcomeRejected, Status: http.StatusRequestEntityTooLarge, Key: key}, kindRequestTooLarge,
			"the body is larger than the "+strconv.FormatInt(g.c.maxBody, 10)+" bytes read to fingerprint a request", 0)
		return nil, false
	case err != nil:
		g.refuse(w, r, Event{Outcome: outcomeRejected, Status: http.StatusBadRequest, Key: key}, "", "the request body could not be read", 0)
		return nil, false
	}
	return body, true
}
