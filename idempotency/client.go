package idempotency

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
)

// maxErrorBody is how much of an error response is read for its kind.
const maxErrorBody = 64 << 10

// Transport is an http.RoundTripper for servers that honour Idempotency-Key.
// For a request that carries a key — in its Idempotency-Key header, or in its
// context (retry.WithIdempotencyKey) — it:
//
//   - checks the key before sending (idempotency.ValidateKey: at most 255
//     characters, no control characters), and fails the request otherwise;
//   - sets the header from the context, so that every attempt of a retried
//     call sends the same key;
//   - answers a 409 "in progress" (KindInProgress) by waiting — the
//     server's Retry-After, and at least 10ms doubling up to the poll
//     interval — and sending the request again, until the first request's
//     stored result comes back, the context ends (an *Error with
//     ErrInProgress), or the next wait would outlast its deadline or
//     WithMaxWait (the 409 is returned as it is).
//
// It never mints a key: a request without one passes through untouched.
// Other responses, a 409 "key reuse" among them, are returned as they are,
// for ResponseError and Classify to judge. A request body is sent again only
// if the request has GetBody (http.NewRequest sets it for in-memory bodies).
//
// The zero Transport uses http.DefaultTransport and the defaults.
type Transport struct {
	base http.RoundTripper
	c    *config
}

// NewTransport returns a Transport over base (nil means
// http.DefaultTransport), configured by WithPollInterval and WithMaxWait.
func NewTransport(base http.RoundTripper, opts ...Option) (*Transport, error) {
	c, err := newConfig(forTransport, opts)
	if err != nil {
		return nil, err
	}
	return &Transport{base: base, c: c}, nil
}

// transportDefaults configures the zero Transport; it is never modified.
var transportDefaults, _ = newConfig(forTransport, nil)

func (t *Transport) config() *config {
	if t == nil || t.c == nil {
		return transportDefaults
	}
	return t.c
}

func (t *Transport) baseTransport() http.RoundTripper {
	if t == nil || t.base == nil {
		return http.DefaultTransport
	}
	return t.base
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	key, err := requestKey(req)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, classify.Permanent(err) // a bad key stays bad
	}
	if key == "" {
		return t.baseTransport().RoundTrip(req)
	}
	return t.send(req, key)
}

// requestKey returns the request's key: its header's, or its context's.
func requestKey(req *http.Request) (string, error) {
	if values := req.Header.Values(HeaderKey); len(values) > 0 {
		return parseKeyHeader(values)
	}
	if key, ok := retry.IdempotencyKey(req.Context()); ok {
		return key, validKey(key)
	}
	return "", nil
}

// send sends req with key, and again while the server says a request with
// the key is in progress.
func (t *Transport) send(req *http.Request, key string) (*http.Response, error) {
	c := t.config()
	ctx := req.Context()
	if c.maxWait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, c.maxWait, errMaxWait)
		defer cancel()
	}
	rewind := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for n := 1; ; n++ {
		out, err := attemptRequest(req.Context(), req, key, n > 1)
		if err != nil {
			return nil, err
		}
		resp, err := t.baseTransport().RoundTrip(out)
		if err != nil || resp.StatusCode != http.StatusConflict {
			return resp, err
		}
		kind, resp := peekKind(resp)
		if kind != KindInProgress || !rewind {
			return resp, nil
		}
		d := inProgressWait(resp, n, c.poll)
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
			return resp, nil // never start a wait that cannot end in time
		}
		drain(resp)
		if err := sleep(ctx, d); err != nil {
			return nil, &Error{Reason: ErrInProgress, Key: key, Err: err}
		}
	}
}

// attemptRequest returns a copy of req for ctx that carries key, with its
// body rewound if again.
func attemptRequest(ctx context.Context, req *http.Request, key string, again bool) (*http.Request, error) {
	out := req.Clone(ctx)
	out.Header.Set(HeaderKey, key)
	if again && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		out.Body = body
	}
	return out, nil
}

// inProgressWait is the wait before asking again: the server's Retry-After,
// never less than the poll schedule (a "Retry-After: 0" must not make the
// client hammer the server).
func inProgressWait(resp *http.Response, n int, poll time.Duration) time.Duration {
	d, _ := classify.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	return max(d, pollDelay(n, poll))
}

// peekKind reads the kind of an error response and gives the response back
// with its body intact.
func peekKind(resp *http.Response) (string, *http.Response) {
	head, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	rest := resp.Body
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), errReader{err}, rest), rest}
	if err != nil {
		return "", resp
	}
	return problemKind(head), resp
}

// errReader returns err, or io.EOF when err is nil, so that a failed read
// of the head is not lost.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	return 0, io.EOF
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
}

// ResponseError returns the error an HTTP response with a status of 400 or
// more stands for, and nil for any other (or nil) response. It reads up to
// 64 KiB of the body to find the server's error kind — the "kind" or "code"
// member of the JSON body or of its "error" object, or the last segment of a
// problem "type" URI — and closes the body.
//
// The idempotency failures come back as an *Error whose Reason is
// ErrInProgress, ErrKeyReuse or ErrNotRetained — or retry.ErrKeyRequired and
// retry.ErrInvalid for a server's 400 about the key — and whose Err is the
// *classify.StatusError; any other failure is the *classify.StatusError
// itself, with its Kind, for the classifiers to judge.
func ResponseError(resp *http.Response) error {
	if resp == nil || resp.StatusCode < 400 {
		return nil
	}
	var kind string
	if resp.Body != nil {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		kind = problemKind(head)
	}
	se := &classify.StatusError{Code: resp.StatusCode, Header: resp.Header, Kind: kind}
	reason := reasonOfKind(kind)
	if reason == nil {
		return se
	}
	var key string
	if resp.Request != nil {
		key = resp.Request.Header.Get(HeaderKey)
	}
	return &Error{Reason: reason, Key: key, Err: se}
}

func reasonOfKind(kind string) error {
	switch kind {
	case KindInProgress:
		return ErrInProgress
	case KindKeyReuse:
		return ErrKeyReuse
	case KindNotRetained:
		return ErrNotRetained
	case KindKeyMissing:
		return retry.ErrKeyRequired
	case KindKeyInvalid:
		return retry.ErrInvalid
	}
	return nil
}

// ReplayOf reports whether resp replays a stored response (the header
// Idempotent-Replay, or Stripe's Idempotent-Replayed, is "true") and, if the
// server says, the id of the original execution (Idempotent-Replay-Of).
func ReplayOf(resp *http.Response) (execution string, replay bool) {
	if resp == nil {
		return "", false
	}
	h := resp.Header
	if h.Get(HeaderReplay) != "true" && h.Get("Idempotent-Replayed") != "true" {
		return "", false
	}
	return h.Get(HeaderReplayOf), true
}

// Reasons reported by Classify: stable labels for logs and metrics.
const (
	ReasonInProgress    = "idempotency key in progress"
	ReasonKeyReuse      = "idempotency key reused"
	ReasonNotRetained   = "idempotent result not retained"
	ReasonStoredFailure = "idempotent failure kept"
	ReasonClaimLost     = "idempotency claim lost"
)

// Classify is the classifier for idempotent calls; give it to the retry loop
// with retry.WithClassifier (NewClient does). It recognises the idempotency
// failures in an error's chain — an *Error, or a *classify.StatusError whose
// Kind is one of the gateway's:
//
//	in progress (ErrInProgress, KindInProgress)       retry, after Retry-After when present
//	key reuse (ErrKeyReuse, KindKeyReuse)             stop: never retried
//	not retained (ErrNotRetained, KindNotRetained)    stop: it ran; nothing to replay
//	a kept failure (ErrStoredFailure)                 stop: the window returns it again
//	a lost claim (ErrClaimLost)                       stop
//
// and has no opinion on anything else (a failing store included: its
// underlying error decides).
func Classify(err error) classify.Decision {
	switch reasonOf(err) {
	case ErrInProgress:
		return classify.Decision{Verdict: classify.Retry, Reason: ReasonInProgress, RetryAfter: retryAfterOf(err)}
	case ErrKeyReuse:
		return classify.Decision{Verdict: classify.Stop, Reason: ReasonKeyReuse}
	case ErrNotRetained:
		return classify.Decision{Verdict: classify.Stop, Reason: ReasonNotRetained}
	case ErrStoredFailure:
		return classify.Decision{Verdict: classify.Stop, Reason: ReasonStoredFailure}
	case ErrClaimLost:
		return classify.Decision{Verdict: classify.Stop, Reason: ReasonClaimLost}
	}
	return classify.Decision{}
}

func reasonOf(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	var se *classify.StatusError
	if errors.As(err, &se) {
		return reasonOfKind(se.Kind)
	}
	return nil
}

func retryAfterOf(err error) time.Duration {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		return max(ra.RetryAfter(), 0)
	}
	return 0
}

// Client sends requests to a server that honours Idempotency-Key, each
// logical call under one key kept across its retries. Do picks the key — the
// request's header, its context's (retry.WithIdempotencyKey), or a new one
// (NewKey) — and retries the request with a Retrier that has Classify first
// among its classifiers. Because the call carries a key, an attempt that
// timed out is retried (the retry loop's idempotency gate): the server
// recognises the key and does not run the request twice.
//
// A Client is safe for concurrent use. The zero Client sends through
// http.DefaultTransport under the default retry policy, with Classify.
type Client struct {
	hc http.Client
	r  *retry.Retrier
}

// NewClient returns a Client that sends through hc (nil means a zero
// http.Client), its transport wrapped in a Transport unless it is one
// already, and retries under opts, Classify added first. Bad options are a
// *retry.InvalidError.
func NewClient(hc *http.Client, opts ...retry.Option) (*Client, error) {
	r, err := retry.New(append([]retry.Option{retry.WithClassifier(Classify)}, opts...)...)
	if err != nil {
		return nil, err
	}
	c := &Client{r: r}
	if hc != nil {
		c.hc = *hc
	}
	if _, ok := c.hc.Transport.(*Transport); !ok {
		c.hc.Transport = &Transport{base: c.hc.Transport}
	}
	return c, nil
}

// Do sends req as one logical call, retried under one idempotency key, and
// returns the first successful response (check ReplayOf to tell a replay).
// A response with status 400 or more is a failure, turned into an error by
// ResponseError; the call's final failure is a *retry.Error whose last error
// says why. A body without GetBody is read into memory first, so that every
// attempt sends it whole.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	switch {
	case c == nil:
		return nil, invalid("Client", nil, "must not be nil (use NewClient)")
	case req == nil:
		return nil, invalid("req", nil, "must not be nil")
	}
	key, err := requestKey(req)
	if key == "" && err == nil {
		key = NewKey() // one key for this logical call, whatever its retries
	}
	ctx := req.Context()
	if err == nil {
		ctx, err = retry.WithIdempotencyKey(ctx, key)
	}
	if err == nil {
		req, err = rewindable(req.WithContext(ctx))
	}
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	hc, r := c.parts()
	resp, _, err := retry.Value(ctx, r, func(ctx context.Context) (*http.Response, error) {
		return attempt(ctx, hc, req, key)
	})
	return resp, err
}

// clientRetrier serves the zero Client; it is never modified.
var clientRetrier, _ = retry.New(retry.WithClassifier(Classify))

// parts returns what the Client sends with: those NewClient set, or, for the
// zero Client, a Transport over http.DefaultTransport and the default retry
// policy with Classify.
func (c *Client) parts() (*http.Client, *retry.Retrier) {
	if c.r != nil {
		return &c.hc, c.r
	}
	hc := c.hc
	if _, ok := hc.Transport.(*Transport); !ok {
		hc.Transport = &Transport{base: hc.Transport}
	}
	return &hc, clientRetrier
}

func attempt(ctx context.Context, hc *http.Client, req *http.Request, key string) (*http.Response, error) {
	out, err := attemptRequest(ctx, req, key, true)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(out)
	if err != nil {
		return nil, err
	}
	if err := ResponseError(resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// rewindable gives req a GetBody, reading its body into memory if needed.
func rewindable(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return req, nil
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return req, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return req, nil
}
