package httpretry

import (
	"context"
	"fmt"
	"net/http"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/idempotency"
)

// call is one request through the transport: one call of the retry loop.
type call struct {
	t        *Transport
	req      *http.Request   // the caller's; never modified
	ctx      context.Context // the loop's: the request's, with the call's keys
	key      string          // the call's idempotency key; "" for none
	setKey   bool            // the key is not in the request's header: each attempt sets it
	once     string          // why the request is sent once; "" when it may be repeated
	res      *Result         // where the caller asked for the call's Result; nil if it did not
	attempts int
	bodySent bool           // the caller's body went to the base transport
	resp     *http.Response // the successful attempt's response
	last     *http.Response // the last attempt's error response, kept whole
}

// prepare picks the call's idempotency key, decides whether the request may
// be repeated, and sets the call key when a stage of the Retrier reads it
// (its context value costs 2 allocations), before anything is sent.
func (c *call) prepare() error {
	ctx, err := c.idempotencyKey(c.req.Context())
	if err != nil {
		return fmt.Errorf("httpretry: %s %s: not sent: %w", methodOf(c.req), Redact(c.req.URL), err)
	}
	c.once = whyOnce(c.req, c.key)
	if c.t.callKeyed {
		ctx = breaker.WithKey(ctx, c.callKey())
	}
	c.ctx = ctx
	return nil
}

// callKey is the request's (host, model): what the Retrier's breakers,
// cooldowns and keyed limiter keep their state by.
func (c *call) callKey() breaker.Key {
	k := breaker.Key{Target: c.req.URL.Host}
	if c.t.model != nil {
		k.Operation = c.t.model(c.req)
	}
	return k
}

// idempotencyKey finds the call's idempotency key — the request's header,
// its context's (retry.WithIdempotencyKey), or a new one with MintKeys —
// and returns the loop's context, which carries it.
func (c *call) idempotencyKey(ctx context.Context) (context.Context, error) {
	var key string
	if len(c.req.Header[idempotency.HeaderKey]) > 0 { // KeyOf would canonicalise the name first
		var err error
		if key, err = idempotency.KeyOf(c.req.Header); err != nil {
			return ctx, err
		}
	}
	ctxKey, inCtx := retry.IdempotencyKey(ctx)
	switch {
	case key != "":
		c.key = key
		if key != ctxKey {
			return retry.WithIdempotencyKey(ctx, key)
		}
	case inCtx:
		c.key, c.setKey = ctxKey, true
	case c.t.mint && !idempotentMethod(c.req.Method):
		c.key, c.setKey = idempotency.NewKey(), true
		return retry.WithIdempotencyKey(ctx, c.key)
	}
	return ctx, nil
}

// whyOnce says why req must not be sent more than once, or "".
func whyOnce(req *http.Request, key string) string {
	switch {
	case hasBody(req) && req.GetBody == nil:
		return "its body cannot be rewound (no GetBody)"
	case key == "" && !idempotentMethod(req.Method):
		return "without an Idempotency-Key a " + req.Method + " is not safe to repeat"
	}
	return ""
}

// idempotentMethod reports the methods RFC 9110 defines as idempotent.
func idempotentMethod(m string) bool {
	switch m {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete, http.MethodTrace:
		return true
	}
	return false
}

// run runs the attempts: a request sent once through the Retrier with one
// attempt — an ordinary call, which every stage and observer sees — the
// others through the Hedger, if any, else the Retrier. The Retrier keeps no
// reference to its operation, so that the call stays on RoundTrip's stack:
// a request that succeeds at once allocates nothing in the transport (a
// call on the heap, with its bound method, cost 2 allocations and about
// 100 ns; bench: HTTPSuccess/retry, 2026-12-01).
func (c *call) run() (retry.Stats, error) {
	switch {
	case c.once != "":
		return c.t.once.Run(c.ctx, c.attempt) // its Stats go in the NotRetriedError
	case c.t.hedger != nil:
		return c.runHedged()
	case c.res == nil:
		// Nobody asked for the Stats: Do reads the clock once, where Run
		// reads it twice (about 40 ns a read here).
		return retry.Stats{}, c.t.r.Do(c.ctx, c.attempt)
	}
	return c.t.r.Run(c.ctx, c.attempt)
}

// attempt sends one attempt. An error status becomes an error for the loop
// to classify; its response is kept until the next attempt, then drained and
// closed.
func (c *call) attempt(actx context.Context) error {
	c.discard()
	c.attempts++
	req, l, err := c.request(actx)
	if err != nil {
		return err
	}
	resp, err := c.t.baseTransport().RoundTrip(req)
	if err == nil && resp == nil {
		err = errNoResponse
	}
	if err != nil {
		return c.failed(actx, l, err)
	}
	return c.answer(actx, resp, l)
}

// request prepares the attempt's request: the caller's own for a first
// attempt that needs nothing else, otherwise a copy with the call's key, the
// body rewound, and the context the attempt's deadline may cancel.
func (c *call) request(actx context.Context) (*http.Request, link, error) {
	ctx, l := c.req.Context(), link{}
	if actx.Done() != c.ctx.Done() { // the attempt has a deadline of its own
		ctx, l = linkTo(ctx, actx)
	}
	req := c.req
	switch {
	case c.setKey:
		req = c.req.Clone(ctx) // the header is copied: the caller's stays as it was
		req.Header.Set(idempotency.HeaderKey, c.key)
	case ctx != c.req.Context() || c.attempts > 1 && hasBody(c.req):
		req = c.req.WithContext(ctx) // a shallow copy: the header is shared, and only read
	}
	if c.attempts == 1 {
		c.bodySent = true
		return req, l, nil
	}
	if hasBody(c.req) {
		body, err := c.req.GetBody()
		if err != nil {
			l.release()
			return nil, link{}, classify.Permanent(fmt.Errorf("httpretry: rewind the body for attempt %d: %w", c.attempts, err))
		}
		req.Body = body
	}
	return req, l, nil
}

// failed turns the base transport's error into the attempt's failure.
func (c *call) failed(actx context.Context, l link, err error) error {
	l.release()
	if actx.Err() != nil && c.req.Context().Err() == nil {
		err = fmt.Errorf("httpretry: no response within the attempt timeout: %w (the transport said: %v)", context.Cause(actx), err)
	}
	if c.key == "" && c.once == "" {
		// A request idempotent by its method may be repeated after a timeout
		// — what the retry loop's idempotency gate asks of a timed-out
		// attempt — as a keyed one may.
		if d := classify.Timeouts(err); d.Timeout {
			return classify.Mark(err, classify.Decision{Verdict: classify.Retry, Reason: d.Reason})
		}
	}
	return err
}

// answer takes the attempt's response: a success for the caller, or an error
// status for the loop — a *classify.StatusError, whose Retry-After the
// classifiers read and whose 503 the Retrier's cooldowns heed.
func (c *call) answer(actx context.Context, resp *http.Response, l link) error {
	var err error
	if resp.StatusCode >= 400 {
		err = c.statusError(resp) // read within the attempt's deadline
	}
	if !l.keep(resp) {
		return c.failed(actx, l, context.Cause(actx))
	}
	if err == nil {
		c.resp = resp
		return nil
	}
	c.last = resp
	return err
}

// discard drains and closes the previous attempt's error response.
func (c *call) discard() {
	if c.last != nil {
		drain(c.last.Body, c.t.drainLimit)
		c.last = nil
	}
}

// finish reports the call's Result, if asked, and returns its answer.
func (c *call) finish(st retry.Stats, err error) (*http.Response, error) {
	if !c.bodySent {
		closeBody(c.req)
	}
	resp, why, err := c.outcome(st, err)
	if c.res != nil {
		*c.res = Result{Stats: st, Err: why}
	}
	return resp, err
}

// outcome returns what RoundTrip returns — the success; or the last error
// response, whose reason is why; or the error — as the loop's stop reason
// says (see answerFor).
func (c *call) outcome(st retry.Stats, err error) (resp *http.Response, why, rerr error) {
	if err == nil {
		return c.resp, nil, nil
	}
	a := c.answerOf(err)
	if a == lastAnswer && c.once != "" && c.attempts > 0 {
		err = c.notRetried(err, st)
	}
	if a != lastAnswer || c.last == nil {
		c.discard()
		return nil, err, err
	}
	resp, c.last = c.last, nil
	return resp, err, nil
}

// link ties the request of an attempt that has its own deadline (an attempt
// timeout) to that deadline only until the response's header — and, for an
// error response, the part of its body the transport reads — has arrived.
// The request's context derives from the caller's, so a response handed to
// the caller stays readable until the caller closes its body or its own
// context ends. The zero link ties nothing.
type link struct {
	cancel context.CancelCauseFunc
	stop   func() bool
}

func linkTo(parent, actx context.Context) (context.Context, link) {
	ctx, cancel := context.WithCancelCause(parent)
	stop := context.AfterFunc(actx, func() { cancel(context.Cause(actx)) })
	return ctx, link{cancel, stop}
}

// keep unties resp from the attempt's deadline, and reports false, with
// resp closed, if the deadline came first.
func (l link) keep(resp *http.Response) bool {
	if l.cancel == nil {
		return true
	}
	if !l.stop() {
		_ = resp.Body.Close()
		return false
	}
	resp.Body = untied(resp.Body, l.cancel)
	return true
}

// release ends the attempt's request context.
func (l link) release() {
	if l.cancel != nil {
		l.stop()
		l.cancel(nil)
	}
}
