package httpretry

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
)

// call is one request through the transport: its attempts, and the last
// error response, kept whole in case it is the final answer.
type call struct {
	t          *Transport
	req        *http.Request
	key        breaker.HostModel
	replayable bool
	attempts   int
	last       *http.Response // the last attempt's error response
}

// attempt sends one attempt. An error status becomes a *classify.StatusError
// for the loop to classify; its response is kept until the next attempt, then
// drained and closed.
func (c *call) attempt(ctx context.Context) (*http.Response, error) {
	c.discard()
	req, err := c.request(ctx)
	if err != nil {
		return nil, err
	}
	if cd := c.t.cooldowns; cd != nil {
		if err := cd.Check(c.key); err != nil {
			closeBody(req)
			return nil, err // local: no request sent
		}
	}
	resp, err := c.t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 400 {
		return resp, nil
	}
	c.last = resp
	serr := c.t.statusError(resp)
	c.observe(ctx, serr)
	return resp, serr
}

func (c *call) whyOnce() string {
	if c.req.Body != nil && c.req.Body != http.NoBody && c.req.GetBody == nil {
		return "its body cannot be rewound (no GetBody)"
	}
	return "without an Idempotency-Key a " + c.req.Method + " is not safe to repeat"
}

// request prepares the attempt's request: the original for the first attempt,
// a clone with a fresh body after it.
func (c *call) request(ctx context.Context) (*http.Request, error) {
	c.attempts++
	req := c.req.Clone(ctx)
	if c.attempts == 1 || c.req.Body == nil || c.req.Body == http.NoBody {
		req.Body = c.req.Body
		return req, nil
	}
	body, err := c.req.GetBody()
	if err != nil {
		return nil, fmt.Errorf("httpretry: rewind the body for attempt %d: %w", c.attempts, err)
	}
	req.Body = body
	return req, nil
}

// observe starts the key's cooldown after a 503 with Retry-After.
func (c *call) observe(ctx context.Context, err error) {
	if cd := c.t.cooldowns; cd != nil {
		cd.Observe(c.key, err)
	}
}

// discard drains and closes the previous attempt's error response.
func (c *call) discard() {
	if c.last != nil {
		drain(c.last.Body, c.t.drainLimit)
		c.last = nil
	}
}

// finish returns the final response (the last error response, if the loop
// gave up on a status) with the call's result attached, or the error.
func (c *call) finish(ctx context.Context, resp *http.Response, st retry.Stats, err error) (*http.Response, error) {
	if err == nil {
		return attach(resp, Result{Stats: st}), nil
	}
	if c.attempts == 0 {
		closeBody(c.req)
	} else if !c.replayable {
		err = &NotRetriedError{Method: c.req.Method, URL: Redact(c.req.URL), Reason: c.whyOnce(), Err: err, Stats: st}
	}
	if c.last != nil { // the loop gave up on an error status: that response is the answer
		last := c.last
		c.last = nil
		return attach(last, Result{Stats: st, Err: err}), nil
	}
	return nil, err
}

// NotRetriedError reports a request sent once because repeating it was not
// known to be safe.
type NotRetriedError struct {
	Method string
	URL    string // redacted
	Reason string
	Err    error
	// Stats are the call's: one attempt, and the time it took.
	Stats retry.Stats
}

// Error returns "httpretry: POST https://api.example/orders sent once, not
// retried: without an Idempotency-Key a POST is not safe to repeat: <err>".
func (e *NotRetriedError) Error() string {
	return fmt.Sprintf("httpretry: %s %s sent once, not retried: %s: %v", e.Method, e.URL, e.Reason, e.Err)
}

// Unwrap returns the attempt's failure.
func (e *NotRetriedError) Unwrap() error { return e.Err }

// Final reports true: no enclosing retry loop may resend the request.
func (e *NotRetriedError) Final() bool { return true }

// LogValue reports the error for log/slog: method, redacted URL, reason.
func (e *NotRetriedError) LogValue() slog.Value {
	return slog.GroupValue(slog.String("method", e.Method), slog.String("url", e.URL),
		slog.String("reason", e.Reason), slog.String("error", e.Err.Error()))
}

// Result is what the transport reports about a request: its attempts and
// waits, and why it stopped when the final response is an error status.
type Result struct {
	retry.Stats
	// Err is why the loop stopped on an error response — a *retry.Error, or a
	// *NotRetriedError — or nil when the response is a success.
	Err error
}

type resultKey struct{}

func attach(resp *http.Response, r Result) *http.Response {
	if resp.Request != nil {
		resp.Request = resp.Request.WithContext(context.WithValue(resp.Request.Context(), resultKey{}, r))
	}
	return resp
}

// ResultOf returns the result the transport attached to resp.
func ResultOf(resp *http.Response) (Result, bool) {
	if resp == nil || resp.Request == nil {
		return Result{}, false
	}
	r, ok := resp.Request.Context().Value(resultKey{}).(Result)
	return r, ok
}
