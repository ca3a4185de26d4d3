package httpretry

import (
	"errors"
	"net/http"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/internal/argerr"
)

// Transport is an http.RoundTripper that retries: each request is one call
// of a retry.Retrier, its attempts sent through the base transport. It is
// safe for concurrent use.
//
// The zero Transport is ready to use, like http.Transport's: it sends
// through http.DefaultTransport under the default Retrier (retry.New()),
// drains 64 KiB of a discarded body, mints no keys and does not hedge. Every
// zero Transport of a process runs on that one Retrier and so shares its
// retry budget: a host that fails long enough closes it for every host,
// whose retries stop while their first attempts go on. Give each host a
// Transport of its own (New) to keep their budgets apart. A nil *Transport,
// or one New refused, fails every request with a *retry.InvalidError.
type Transport struct {
	config
	once      *retry.Retrier // r with one attempt: for the requests sent once
	callKeyed bool           // a stage of r reads the call key: set it
	built     bool           // made by New
	err       *retry.InvalidError
}

// defaultTransport is what the zero Transport runs with; it is never
// modified.
var defaultTransport = mustNew()

func mustNew() *Transport {
	r, err := retry.New()
	if err == nil {
		var t *Transport
		if t, err = New(r); err == nil {
			return t
		}
	}
	panic(err) // New without options cannot fail
}

// New returns a Transport that runs every request through r, configured by
// opts; r's stages — breakers, cooldowns, limiter, budget, observers —
// apply to every request. A nil or refused r, or a bad option, is returned
// as a *retry.InvalidError, with a Transport that fails every request with
// it without sending it: a discarded error cannot turn into the defaults.
func New(r *retry.Retrier, opts ...Option) (*Transport, error) {
	if r == nil {
		return refused(argerr.New("httpretry.New", nil, "the Retrier must not be nil (build one with retry.New)"))
	}
	once, err := r.With(retry.WithMaxAttempts(1))
	if err != nil {
		return refused(argerr.Nested("httpretry.New", nil, err))
	}
	t := &Transport{config: config{r: r, drainLimit: defaultDrainLimit}, once: once, callKeyed: r.Keyed(), built: true}
	for _, o := range opts {
		if o == nil {
			return refused(argerr.New("httpretry.New", nil, "an Option must not be nil"))
		}
		if err := o(&t.config); err != nil {
			return refused(err)
		}
	}
	return t, nil
}

func refused(err *retry.InvalidError) (*Transport, error) {
	return &Transport{built: true, err: err}, err
}

// NewClient returns an *http.Client whose Transport is New(r, opts...).
// With a nil r or a bad option it returns the error and a client that fails
// every request with it.
func NewClient(r *retry.Retrier, opts ...Option) (*http.Client, error) {
	t, err := New(r, opts...)
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
// success; or, when the retry loop stopped on an error response, that
// response (why it stopped is in the Result, see WithResult); or the error
// that ended the call — see the package documentation for each reason the
// loop stops. Like every RoundTripper, it closes req's body, even on
// errors.
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
