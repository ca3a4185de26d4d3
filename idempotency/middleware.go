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
)

// Header fields of the idempotency protocol.
const (
	// HeaderKey carries the client's idempotency key (IETF
	// draft-ietf-httpapi-idempotency-key-header; Stripe), as a token or a
	// quoted structured-field string.
	HeaderKey = "Idempotency-Key"
	// HeaderReplay is "true" on a response that replays a stored one.
	HeaderReplay = "Idempotent-Replay"
	// HeaderReplayOf is, on a replay, the id of the original execution.
	HeaderReplayOf = "Idempotent-Replay-Of"
)

// Middleware returns a net/http middleware that makes the requests it guards
// — POST and PATCH by default (WithMethods) — safe to retry, keyed by their
// Idempotency-Key header:
//
//	no key (unless KeyOptional), or a bad one  400 problem
//	a body over WithMaxRequestBody             413 problem
//	the first request with a key               the handler runs; its response is stored
//	a repeat of a completed request            the stored status, headers and body,
//	                                           with Idempotent-Replay: true and
//	                                           Idempotent-Replay-Of: <execution id>
//	a repeat while the first is in flight      409 problem, kind idempotency-in-progress,
//	                                           with Retry-After
//	the same key with a different request      422 problem, kind idempotency-key-reuse
//	a repeat of a response over the cap        409 problem, kind idempotency-response-not-retained
//	the store failing                          503 problem, with Retry-After
//
// Errors are problem details (RFC 9457, application/problem+json) with a
// "kind" member (see the Kind… constants). A request is the same as an
// earlier one when their fingerprints match (WithFingerprint; by default the
// method, path, query and body bytes).
//
// The first response is streamed to its client as the handler writes it,
// and recorded up to the retention cap. A response with status 5xx, 408 or 429
// is a failure: it releases the key so that the client's retry runs the
// handler again (or, with KeepFailures, is stored and replayed like any
// other). A handler that panics, or that returns without answering once its
// request's context is done, releases the key.
//
// Keys are shared by every client unless WithScope partitions them: without
// it, a client that learns another's key can replay its response.
func Middleware(s Store, opts ...Option) (func(http.Handler) http.Handler, error) {
	c, err := newConfig(forMiddleware, opts)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, invalid("store", nil, "must not be nil")
	}
	c.failValue = func(v []byte, _ error) []byte { return v }
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
	if !slices.Contains(g.c.methods, r.Method) {
		g.next.ServeHTTP(w, r)
		return
	}
	key, err := parseKeyHeader(r.Header.Values(HeaderKey))
	switch {
	case errors.Is(err, errNoKey) && g.c.keyOptional:
		g.next.ServeHTTP(w, r)
		return
	case errors.Is(err, errNoKey):
		writeProblem(w, http.StatusBadRequest, KindKeyMissing, "this request needs an Idempotency-Key header", 0)
		return
	case err != nil:
		writeProblem(w, http.StatusBadRequest, KindKeyInvalid, err.Error(), 0)
		return
	}
	body, ok := readBody(w, r, g.c.maxBody)
	if !ok {
		return
	}
	g.serve(w, r, g.storeKey(r, key), g.c.fingerprint(r, body), body)
}

// serve claims the key and runs the handler, or answers from the record.
func (g *guard) serve(w http.ResponseWriter, r *http.Request, key string, fp Fingerprint, body []byte) {
	claim := Record{Status: InProgress, Token: rand.Text(), Fingerprint: fp}
	rec, claimed, err := g.s.Claim(r.Context(), key, claim, g.c.lease)
	switch {
	case err != nil:
		writeProblem(w, http.StatusServiceUnavailable, KindStoreUnavailable, "the idempotency store failed; nothing was run", g.c.retryAfter)
	case claimed:
		g.run(w, r, key, claim, body)
	default:
		g.answer(w, rec, fp)
	}
}

// run executes the handler under the claim, streaming its response to the
// client and recording it.
func (g *guard) run(w http.ResponseWriter, r *http.Request, key string, claim Record, body []byte) {
	rw := &recorder{ResponseWriter: w, limit: g.c.maxResult}
	// The outcome is recorded, or the key released, by execute; a store
	// failure at that point cannot change a response already sent.
	_, _ = g.c.execute(r.Context(), g.s, key, claim, func(ctx context.Context) (output, error) {
		req := r.WithContext(ctx)
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		g.next.ServeHTTP(rw, req)
		if rw.status == 0 && ctx.Err() != nil {
			// The handler gave up with its request and answered nothing:
			// not a result to replay.
			return output{}, context.Cause(ctx)
		}
		out := rw.output()
		if failedStatus(rw.status) {
			return out, errHandlerFailed
		}
		return out, nil
	})
}

var errHandlerFailed = errors.New("handler answered with a failure status")

// failedStatus reports a response that says the request may succeed if sent
// again, which must not be replayed in its place.
func failedStatus(code int) bool {
	return code >= 500 || code == http.StatusRequestTimeout || code == http.StatusTooManyRequests
}

// answer responds from a record this request did not claim.
func (g *guard) answer(w http.ResponseWriter, rec Record, fp Fingerprint) {
	switch {
	case rec.Fingerprint != fp:
		writeProblem(w, http.StatusUnprocessableEntity, KindKeyReuse,
			"this Idempotency-Key was used with a different request; send the original request unchanged, or a new key for a new request", 0)
	case rec.Status == InProgress:
		writeProblem(w, http.StatusConflict, KindInProgress,
			"a request with this Idempotency-Key is in progress; retry after the wait to get its response", g.c.retryAfter)
	case rec.Status == NotRetained:
		writeProblem(w, http.StatusConflict, KindNotRetained,
			"the request with this Idempotency-Key succeeded, but its response was too large to keep for replay", 0)
	default:
		g.replay(w, rec)
	}
}

func (g *guard) replay(w http.ResponseWriter, rec Record) {
	resp, err := decodeResponse(rec.Value)
	if err != nil {
		writeProblem(w, http.StatusServiceUnavailable, KindStoreUnavailable, "the stored response is unreadable", g.c.retryAfter)
		return
	}
	h := w.Header()
	for name, values := range resp.header {
		h[name] = values
	}
	h.Set(HeaderReplay, "true")
	h.Set(HeaderReplayOf, rec.Token)
	h.Set("Content-Length", strconv.Itoa(len(resp.body)))
	w.WriteHeader(resp.status)
	_, _ = w.Write(resp.body)
}

// storeKey scopes the client's key; the length prefix keeps scopes apart
// whatever characters they contain.
func (g *guard) storeKey(r *http.Request, key string) string {
	if g.c.scope == nil {
		return key
	}
	scope := g.c.scope(r)
	return strconv.Itoa(len(scope)) + ":" + scope + ":" + key
}

// readBody reads the whole body, up to max bytes; it answers the request
// itself and reports false when it cannot.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, true
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeProblem(w, http.StatusRequestEntityTooLarge, KindRequestTooLarge,
			"the body is larger than the "+strconv.FormatInt(max, 10)+" bytes read to fingerprint a request", 0)
		return nil, false
	case err != nil:
		writeProblem(w, http.StatusBadRequest, "", "the request body could not be read", 0)
		return nil, false
	}
	return body, true
}

// requestFingerprint is the default fingerprint: what the client sent.
func requestFingerprint(r *http.Request, body []byte) Fingerprint {
	return NewFingerprint([]byte(r.Method), []byte(r.URL.EscapedPath()), []byte(r.URL.RawQuery), body)
}

var errNoKey = errors.New("no Idempotency-Key")

// parseKeyHeader reads the Idempotency-Key field: a bare token, as Stripe's
// clients send it, or a structured-field string (RFC 8941), as the IETF
// draft specifies; either way a key the library accepts (idempotency.ValidateKey).
func parseKeyHeader(values []string) (string, error) {
	switch {
	case len(values) == 0 || len(values) == 1 && strings.TrimSpace(values[0]) == "":
		return "", errNoKey
	case len(values) > 1:
		return "", errors.New("Idempotency-Key sent more than once")
	}
	key := strings.TrimSpace(values[0])
	if strings.HasPrefix(key, `"`) {
		var err error
		if key, err = parseSFString(key); err != nil {
			return "", err
		}
	}
	if err := validKey(key); err != nil {
		return "", err
	}
	return key, nil
}

// parseSFString decodes a structured-field string: printable ASCII between
// double quotes, with \" and \\ escapes, and nothing after it.
func parseSFString(s string) (string, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
			if i == len(s) || (s[i] != '"' && s[i] != '\\') {
				return "", errors.New("Idempotency-Key: bad escape in quoted string")
			}
			b.WriteByte(s[i])
		case c == '"':
			if i != len(s)-1 {
				return "", errors.New("Idempotency-Key: text after the quoted string")
			}
			return b.String(), nil
		case c < 0x20 || c > 0x7e:
			return "", errors.New("Idempotency-Key: quoted string must be printable ASCII")
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("Idempotency-Key: unterminated quoted string")
}

// recorder passes a response through to the client and keeps a copy of it,
// up to limit bytes of body.
type recorder struct {
	http.ResponseWriter
	limit    int
	status   int
	header   http.Header
	body     []byte
	overflow bool
}

func (rw *recorder) WriteHeader(code int) {
	if rw.status == 0 && code >= 200 {
		rw.status, rw.header = code, rw.Header().Clone()
	}
	rw.ResponseWriter.WriteHeader(code) // 1xx pass through unrecorded
}

func (rw *recorder) Write(p []byte) (int, error) {
	if rw.status == 0 {
		rw.WriteHeader(http.StatusOK)
	}
	if !rw.overflow {
		if len(rw.body)+len(p) > rw.limit {
			rw.overflow, rw.body = true, nil
		} else {
			rw.body = append(rw.body, p...)
		}
	}
	return rw.ResponseWriter.Write(p)
}

// Flush lets streaming handlers flush through the recorder.
func (rw *recorder) Flush() {
	if rw.status == 0 {
		rw.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(rw.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (rw *recorder) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

// output is the recorded response in stored form.
func (rw *recorder) output() output {
	if rw.status == 0 { // the handler wrote nothing: net/http sends 200
		rw.status, rw.header = http.StatusOK, rw.Header().Clone()
	}
	if rw.overflow {
		return output{overflow: true}
	}
	v := encodeResponse(rw.status, rw.header, rw.body)
	return output{value: v, overflow: len(v) > rw.limit}
}
