package httpretry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/internal/argerr"
)

// Result is what the transport reports about a call made with a context
// from WithResult: its attempts, waits and elapsed time, and why it did not
// succeed.
type Result struct {
	retry.Stats
	// Err is why the call did not succeed, nil when it did: with the final
	// error response, why the loop stopped on it (a *retry.Error, or a
	// *NotRetriedError); without a response, the error RoundTrip returned.
	Err error
}

type resultKey struct{}

// WithResult returns a context with which the transport reports, into res,
// the Result of the call made with it — on success and on failure — before
// RoundTrip returns, in the way of net/http/httptrace. Nothing is reported,
// and nothing is spent on reporting, for a call whose context does not ask.
// Give each call its own Result; after redirects it holds the last hop's.
// A nil ctx or res is a *retry.InvalidError.
func WithResult(ctx context.Context, res *Result) (context.Context, error) {
	switch {
	case ctx == nil:
		return ctx, argerr.New("httpretry.WithResult", nil, "the context must not be nil")
	case res == nil:
		return ctx, argerr.New("httpretry.WithResult", nil, "the Result must not be nil")
	}
	return context.WithValue(ctx, resultKey{}, res), nil
}

// resultOf returns the Result that ctx asks the transport to fill, or nil.
func resultOf(ctx context.Context) *Result {
	res, _ := ctx.Value(resultKey{}).(*Result)
	return res
}

// statusError is the failure an error response stands for in the retry
// loop: a *classify.StatusError, with its Kind when WithKind reads one, or,
// for a keyed request, the idempotency failure the server reports.
func (c *call) statusError(resp *http.Response) error {
	se := &classify.StatusError{Code: resp.StatusCode, Header: resp.Header}
	keyed := c.key != "" && keyProblemStatus(resp.StatusCode)
	if c.t.kind == nil && !keyed {
		return se
	}
	head := peek(resp, maxKindBody)
	if c.t.kind != nil {
		se.Kind = c.t.kind(resp, head)
	}
	if keyed {
		if err := c.keyProblem(resp, head); err != nil {
			return err
		}
	}
	return se
}

// keyProblemStatus reports the statuses with which servers answer a problem
// with an idempotency key.
func keyProblemStatus(code int) bool {
	return code == http.StatusBadRequest || code == http.StatusConflict || code == http.StatusUnprocessableEntity
}

// keyProblem returns the idempotency failure that a keyed request's error
// response reports — in progress, key reused, result not retained — marked
// with idempotency.Classify's decision: an in-progress answer is retried
// after the server's Retry-After, within the loop's bounds like every wait;
// the others never. It returns nil for any other response.
func (c *call) keyProblem(resp *http.Response, head []byte) error {
	probe := &http.Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(head))}
	var ie *idempotency.Error
	if !errors.As(idempotency.ResponseError(probe), &ie) {
		return nil
	}
	ie.Key = c.key
	if d := idempotency.Classify(ie); d.Verdict != classify.NoOpinion {
		return classify.Mark(ie, d)
	}
	return ie
}

// NotRetriedError reports a request sent once because repeating it was not
// known to be safe: RoundTrip's error when no response came, or the
// Result's Err with the error response it returned.
type NotRetriedError struct {
	Method string
	URL    string // redacted
	Reason string // why it was sent once, e.g. "its body cannot be rewound (no GetBody)"
	// Err is the call's failure: the *retry.Error of its one attempt.
	Err error
	// Stats are the call's: one attempt, and the time it took.
	Stats retry.Stats
}

// notRetried wraps the failure of a request sent once.
func (c *call) notRetried(err error, st retry.Stats) error {
	return &NotRetriedError{Method: methodOf(c.req), URL: Redact(c.req.URL), Reason: c.once, Err: err, Stats: st}
}

// Error returns "httpretry: POST https://api.example/orders sent once, not
// retried: without an Idempotency-Key a POST is not safe to repeat: <err>".
func (e *NotRetriedError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("httpretry: %s %s sent once, not retried: %s: %v", e.Method, e.URL, e.Reason, e.Err)
}

// Unwrap returns the attempt's failure.
func (e *NotRetriedError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Final reports true: no enclosing retry loop may resend the request.
func (e *NotRetriedError) Final() bool { return true }

// LogValue reports the error for log/slog: method, redacted URL, reason, and
// the attempt's failure.
func (e *NotRetriedError) LogValue() slog.Value {
	if e == nil {
		return slog.StringValue("<nil>")
	}
	attrs := []slog.Attr{slog.String("method", e.Method), slog.String("url", e.URL), slog.String("reason", e.Reason)}
	if e.Err != nil {
		attrs = append(attrs, slog.String("error", e.Err.Error()))
	}
	return slog.GroupValue(attrs...)
}
