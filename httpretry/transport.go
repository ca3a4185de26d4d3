package httpretry

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/internal/breakerset"
)

// Transport is an http.RoundTripper that retries: each request is one call of
// the retry loop, its attempts sent through the base transport. It is safe
// for concurrent use.
//
// The zero Transport is ready to use, like http.Transport's: it sends through
// http.DefaultTransport under the default retry policy (retry.New()), drains
// DefaultDrainLimit of a discarded body, and has no breakers, cooldowns,
// hooks or logger, and mints no keys. A nil *Transport, or one whose options
// New refused, fails every request with a *retry.InvalidError.
type Transport struct {
	base       http.RoundTripper // nil: http.DefaultTransport, read at each request
	r          *retry.Retrier
	breakers   *breakerset.Set
	cooldowns  *breaker.Cooldowns[breaker.HostModel]
	model      func(*http.Request) string
	kind       func(*http.Response, []byte) string
	hooks      []func(context.Context, Attempt)
	logger     *slog.Logger
	drainLimit int64
	mint       bool
	built      bool                // made by New
	err        *retry.InvalidError // New refused an option: every request fails with it

	hostModelCtx bool // WithHostModelContext: the loop's context carries the (host, model)
}

// defaultTransport is what the zero Transport runs with; it is never
// modified.
var defaultTransport = mustNew()

func mustNew() *Transport {
	t, err := New()
	if err != nil {
		panic(err) // New without options cannot fail
	}
	return t
}

// New returns a Transport configured by opts, or the first bad option as a
// *retry.InvalidError. A Transport whose options were refused is still
// returned, and fails every request with that error without sending it: a
// discarded error cannot turn into the defaults.
func New(opts ...Option) (*Transport, error) {
	t := &Transport{r: new(retry.Retrier), drainLimit: DefaultDrainLimit, built: true}
	for _, o := range opts {
		if o == nil {
			err := argerr.New("httpretry.New", nil, "an Option must not be nil")
			return &Transport{built: true, err: err}, err
		}
		if err := o(t); err != nil {
			return &Transport{built: true, err: err}, err
		}
	}
	if err := t.checkHedging(); err != nil {
		return &Transport{built: true, err: err}, err
	}
	return t, nil
}

// NewClient returns an *http.Client whose Transport is New(opts...). With a
// bad option it returns the error and a client that fails every request with
// it.
func NewClient(opts ...Option) (*http.Client, error) {
	t, err := New(opts...)
	return &http.Client{Transport: t}, err
}

// ready returns the Transport to run with: t, the defaults for the zero
// Transport, or the reason t cannot run.
func (t *Transport) ready() (*Transport, error) {
	switch {
	case t == nil:
		return nil, argerr.New("httpretry.Transport", nil, "must not be nil (use New, or a zero Transport)")
	case t.err != nil:
		return nil, t.err
	case !t.built:
		return defaultTransport, nil
	}
	return t, nil
}

func (t *Transport) baseTransport() http.RoundTripper {
	if t.base == nil {
		return http.DefaultTransport
	}
	return t.base
}

// RoundTrip sends req, retrying it when that is safe, and returns the first
// success, or the last error response (why the loop stopped on it is in the
// Result, see WithResult), or the error that ended the call. Like every
// RoundTripper, it closes req's body, even on errors.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t, err := t.ready()
	if err == nil {
		err = checkRequest(req)
	}
	if err != nil {
		closeBody(req)
		return nil, err
	}
	c := call{t: t, req: req, res: resultOf(req.Context())}
	if err := c.prepare(); err != nil {
		closeBody(req)
		if c.res != nil {
			*c.res = Result{Err: err}
		}
		return nil, err
	}
	st, err := c.run()
	return c.finish(st, err)
}

func checkRequest(req *http.Request) error {
	switch {
	case req == nil:
		return argerr.New("httpretry.Transport.RoundTrip", nil, "the request must not be nil")
	case req.URL == nil:
		return argerr.New("httpretry.Transport.RoundTrip", "a request with a nil URL", "the request must have a URL")
	}
	return nil
}

// CloseIdleConnections closes the idle connections of the base transport, if
// it has any to close (http.Client.CloseIdleConnections calls it).
func (t *Transport) CloseIdleConnections() {
	if t, err := t.ready(); err == nil {
		if c, ok := t.baseTransport().(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	}
}

// errNoResponse reports a base transport that broke the RoundTripper
// contract.
var errNoResponse = errors.New("httpretry: the base transport returned neither a response nor an error")
