package httpretry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
)

// DefaultDrainLimit is how much of a discarded body is read before closing it.
const DefaultDrainLimit = 64 << 10

// Option configures a Transport.
type Option func(*Transport) error

// WithBase sets the transport that sends each attempt. The default is
// http.DefaultTransport.
func WithBase(rt http.RoundTripper) Option {
	return func(t *Transport) error {
		if rt == nil {
			return errors.New("httpretry.WithBase: nil RoundTripper")
		}
		t.base = rt
		return nil
	}
}

// WithRetrier sets the retry policy. The default is retry.New() with no
// options.
func WithRetrier(r *retry.Retrier) Option {
	return func(t *Transport) error {
		if r == nil {
			return errors.New("httpretry.WithRetrier: nil Retrier")
		}
		t.r = r
		return nil
	}
}

// WithBreakers gives every (host, model) its own circuit breaker, with the
// settings that settings returns for it, around the retried request.
func WithBreakers(settings func(breaker.HostModel) breaker.Settings, opts ...breaker.Option) Option {
	return func(t *Transport) error {
		if settings == nil {
			return errors.New("httpretry.WithBreakers: nil settings function")
		}
		t.breakerSettings, t.breakerOpts = settings, opts
		return nil
	}
}

// WithCooldowns checks every attempt against cd: a (host, model) cooling
// down after a 503 with Retry-After fails locally, without a request.
func WithCooldowns(cd *breaker.Cooldowns[breaker.HostModel]) Option {
	return func(t *Transport) error {
		if cd == nil {
			return errors.New("httpretry.WithCooldowns: nil Cooldowns")
		}
		t.cooldowns = cd
		return nil
	}
}

// WithModel reads the model (or any second key) of a request, for the
// breakers and cooldowns: one per (host, model).
func WithModel(model func(*http.Request) string) Option {
	return func(t *Transport) error {
		if model == nil {
			return errors.New("httpretry.WithModel: nil function")
		}
		t.model = model
		return nil
	}
}

// WithKind reads an API's own error code from an error response's body (at
// most DrainLimit bytes of it, which stay readable), so that classification
// can tell apart, for example, a gateway's "upstream-error" 502
// (classify.KindUpstreamError) or a spend cap.
func WithKind(kind func(resp *http.Response, body []byte) string) Option {
	return func(t *Transport) error {
		if kind == nil {
			return errors.New("httpretry.WithKind: nil function")
		}
		t.kind = kind
		return nil
	}
}

// WithDrainLimit sets how many bytes of a discarded body are read before it
// is closed; a larger body's connection is closed instead of reused.
func WithDrainLimit(n int64) Option {
	return func(t *Transport) error {
		if n < 0 {
			return fmt.Errorf("httpretry.WithDrainLimit(%d): must not be negative", n)
		}
		t.drainLimit = n
		return nil
	}
}

// Transport is an http.RoundTripper that retries. It is safe for concurrent
// use.
type Transport struct {
	base            http.RoundTripper
	r               *retry.Retrier
	breakerSettings func(breaker.HostModel) breaker.Settings
	breakerOpts     []breaker.Option
	breakers        sync.Map // breaker.HostModel → *breaker.Breaker
	cooldowns       *breaker.Cooldowns[breaker.HostModel]
	model           func(*http.Request) string
	kind            func(*http.Response, []byte) string
	drainLimit      int64
}

// New returns a Transport, or an error naming a bad option.
func New(opts ...Option) (*Transport, error) {
	t := &Transport{base: http.DefaultTransport, drainLimit: DefaultDrainLimit,
		model: func(*http.Request) string { return "" }}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("httpretry.New: nil Option")
		}
		if err := o(t); err != nil {
			return nil, err
		}
	}
	if t.r == nil {
		r, err := retry.New()
		if err != nil {
			return nil, err
		}
		t.r = r
	}
	return t, nil
}

// NewClient returns an *http.Client whose transport retries.
func NewClient(opts ...Option) (*http.Client, error) {
	t, err := New(opts...)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: t}, nil
}

// RoundTrip sends req, retrying it when that is safe.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	key := breaker.HostModel{Host: req.URL.Host, Model: t.model(req)}
	ctx := req.Context()
	if k := req.Header.Get("Idempotency-Key"); k != "" {
		kctx, err := retry.WithIdempotencyKey(ctx, k)
		if err != nil {
			closeBody(req)
			return nil, fmt.Errorf("httpretry: %s %s: not sent: %w", req.Method, Redact(req.URL), err)
		}
		ctx = kctx
	}
	c := &call{t: t, req: req, key: key, replayable: replayable(req)}
	resp, st, err := t.loop(ctx, key, c)
	return c.finish(ctx, resp, st, err)
}

// loop runs the attempts: through the key's breaker if any, else the
// Retrier; a request that is not safe to repeat makes one attempt.
func (t *Transport) loop(ctx context.Context, key breaker.HostModel, c *call) (*http.Response, retry.Stats, error) {
	op := c.attempt
	if !c.replayable {
		ctx = retry.SingleAttempt(ctx)
	}
	b, err := t.breakerFor(key)
	if err != nil {
		closeBody(c.req)
		return nil, retry.Stats{}, err
	}
	if b != nil {
		return breaker.Value(ctx, b, op)
	}
	return retry.Value(ctx, t.r, op)
}

func (t *Transport) breakerFor(key breaker.HostModel) (*breaker.Breaker, error) {
	if t.breakerSettings == nil {
		return nil, nil
	}
	if b, ok := t.breakers.Load(key); ok {
		return b.(*breaker.Breaker), nil
	}
	s := t.breakerSettings(key)
	if s.Name == "" {
		s.Name = key.String()
	}
	b, err := breaker.New(s, t.r, t.breakerOpts...)
	if err != nil {
		return nil, fmt.Errorf("httpretry: breaker for %s: %w", key, err)
	}
	actual, _ := t.breakers.LoadOrStore(key, b)
	return actual.(*breaker.Breaker), nil
}

// replayable reports whether a request may be sent more than once: an
// idempotent method or an Idempotency-Key, and a body that can be rewound.
func replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete, http.MethodTrace:
		return true
	}
	return req.Header.Get("Idempotency-Key") != ""
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// Redact returns u without its user information and with every query value
// replaced by "REDACTED", for logs and errors.
func Redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q := c.Query()
		for k := range q {
			q[k] = []string{"REDACTED"}
		}
		c.RawQuery = q.Encode()
	}
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// drain reads at most limit bytes of body and closes it.
func drain(body io.ReadCloser, limit int64) {
	_, _ = io.CopyN(io.Discard, body, limit)
	_ = body.Close()
}

// peek reads up to limit bytes of resp's body and puts them back in front of
// the rest, so the body stays whole.
func peek(resp *http.Response, limit int64) []byte {
	var buf bytes.Buffer
	_, _ = io.CopyN(&buf, resp.Body, limit)
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(buf.Bytes()), resp.Body), resp.Body}
	return buf.Bytes()
}

// statusError is the failure an error response stands for in the retry loop.
func (t *Transport) statusError(resp *http.Response) error {
	err := &classify.StatusError{Code: resp.StatusCode, Header: resp.Header}
	if t.kind != nil {
		err.Kind = t.kind(resp, peek(resp, t.drainLimit))
	}
	return err
}
