package chaos

import (
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/retrykit/retry/internal/argerr"
)

// Fault is what one call suffers. Make one with the functions of this
// package; the zero Fault injects nothing: in a Rule's Script it lets a call
// through untouched ("503, 503, then 200"). A Fault is a small value, safe to
// copy and to share.
type Fault struct {
	kind   kind
	d, p99 time.Duration // Latency, Timeout, Stall: d; LatencyTail: median d, p99
	n      int           // Truncate, Stall: bytes of the body let through
	code   int           // Throttle, Respond: the status
	body   string        // Respond
	err    error         // Error
	value  any           // Value
}

type kind uint8

const (
	none kind = iota
	errorKind
	latency
	latencyTail
	throttle
	respond
	value
	refused
	resetBefore
	resetAfter
	timeout
	truncate
	stall
)

// Error makes the call fail with err, without reaching the target.
func Error(err error) Fault { return Fault{kind: errorKind, err: err} }

// Latency delays the call by d, then lets the next rules decide its outcome.
// The wait is a real timer, so testing/synctest runs it in no real time; it
// ends early, with the context's cause, when the call's context ends.
func Latency(d time.Duration) Fault { return Fault{kind: latency, d: d} }

// LatencyTail delays the call by a random wait with a heavy tail: half of
// the waits are shorter than median, 99 % shorter than p99, and the rest
// spread far beyond (a Pareto distribution, cut at 100 × p99). Like
// Latency, it then lets the next rules decide the call's outcome.
func LatencyTail(median, p99 time.Duration) Fault {
	return Fault{kind: latencyTail, d: median, p99: p99}
}

// Throttle answers with code (429 or 503, usually) and, when retryAfter is
// positive, a Retry-After header — in whole seconds, rounded up, with a
// Retry-After-Ms header too when retryAfter is not whole seconds — without
// reaching the target. A wrapped function fails with the
// *classify.StatusError an HTTP client would make of that response.
func Throttle(code int, retryAfter time.Duration) Fault {
	return Fault{kind: throttle, code: code, d: retryAfter}
}

// Respond answers with code and body, without reaching the target: an
// outcome of the test's choosing. A wrapped function fails with a
// *classify.StatusError for a code of 400 or more, and otherwise returns
// nil (or the zero value) without running.
func Respond(code int, body string) Fault { return Fault{kind: respond, code: code, body: body} }

// Value makes a function wrapped by WrapValue return v, with no error,
// without running: an outcome of the test's choosing. A function of another
// result type fails with a *retry.InvalidError; one wrapped by Wrap returns
// nil; a transport fails with a *retry.InvalidError (use Respond).
func Value[T any](v T) Fault { return Fault{kind: value, value: v} }

// Refused fails the call as a refused connection does ("connect: connection
// refused"): nothing was sent.
func Refused() Fault { return Fault{kind: refused} }

// ResetBeforeSend fails the call as a connection reset while the request
// was being written does: nothing reached the target.
func ResetBeforeSend() Fault { return Fault{kind: resetBefore} }

// ResetAfterSend sends the call to the target — which processes it — then
// fails it as a connection reset before the answer does, with the same
// error ("read: connection reset by peer"). The answer is lost: a caller
// cannot tell it from a reset before anything was processed.
func ResetAfterSend() Fault { return Fault{kind: resetAfter} }

// Timeout sends the call to the target — which processes it — and holds the
// answer back: after d the call fails as a read that timed out does ("i/o
// timeout"), or earlier, with the context's cause, when its context ends.
func Timeout(d time.Duration) Fault { return Fault{kind: timeout, d: d} }

// Truncate sends the call to the target and cuts its answer's body after n
// bytes: reading on fails with io.ErrUnexpectedEOF, as a connection closed
// mid-body does. A wrapped function, which has no body, fails with
// io.ErrUnexpectedEOF after running.
func Truncate(n int) Fault { return Fault{kind: truncate, n: n} }

// Stall sends the call to the target and stops its answer's body after n
// bytes: the next read blocks for d, then fails as a read that timed out
// does ("i/o timeout"), or earlier, with the context's cause, when the
// call's context ends. A wrapped function runs, then waits and fails the
// same way.
func Stall(n int, d time.Duration) Fault { return Fault{kind: stall, n: n, d: d} }

// String describes f as the call that makes it, e.g. "Throttle(429, 1s)".
func (f Fault) String() string {
	switch f.kind {
	case errorKind:
		return fmt.Sprintf("Error(%v)", f.err)
	case latency, timeout:
		return fmt.Sprintf("%s(%v)", names[f.kind], f.d)
	case latencyTail:
		return fmt.Sprintf("LatencyTail(%v, %v)", f.d, f.p99)
	case throttle:
		return fmt.Sprintf("Throttle(%d, %v)", f.code, f.d)
	case respond:
		return fmt.Sprintf("Respond(%d, %q)", f.code, f.body)
	case value:
		return fmt.Sprintf("Value(%v)", f.value)
	case truncate:
		return "Truncate(" + strconv.Itoa(f.n) + ")"
	case stall:
		return fmt.Sprintf("Stall(%d, %v)", f.n, f.d)
	case none:
		return "Fault{}"
	}
	return names[f.kind] + "()"
}

var names = [...]string{
	none: "none", errorKind: "Error", latency: "Latency", latencyTail: "LatencyTail",
	throttle: "Throttle", respond: "Respond", value: "Value", refused: "Refused",
	resetBefore: "ResetBeforeSend", resetAfter: "ResetAfterSend", timeout: "Timeout",
	truncate: "Truncate", stall: "Stall",
}

// check returns what is wrong with f, or "".
func (f Fault) check() string {
	switch {
	case f.kind == errorKind && f.err == nil:
		return "the error must not be nil"
	case f.d < 0 || f.p99 < 0:
		return "durations must not be negative"
	case f.kind == latencyTail && (f.d == 0 || f.p99 <= f.d):
		return "the median must be positive and shorter than p99"
	case f.kind == throttle && (f.code < 400 || f.code > 599):
		return "the status must be in [400, 599]"
	case f.kind == respond && (f.code < 200 || f.code > 599):
		return "the status must be in [200, 599]"
	case f.n < 0:
		return "the byte count must not be negative"
	}
	return ""
}

// sends reports whether the call reaches the target under f.
func (f Fault) sends() bool {
	switch f.kind {
	case none, resetAfter, timeout, truncate, stall:
		return true
	}
	return false
}

// loses reports whether f loses an answer the target gave.
func (f Fault) loses() bool { return f.sends() && f.kind != none }

// delay returns the wait of a latency fault for the uniform number u in
// (0, 1]. A Pareto distribution with the median and p99 asked for has
// shape a = ln(50) / ln(p99/median) and scale median / 2^(1/a).
func (f Fault) delay(u float64) time.Duration {
	if f.kind == latency {
		return f.d
	}
	a := math.Log(50) / math.Log(float64(f.p99)/float64(f.d))
	scale := float64(f.d) / math.Pow(2, 1/a)
	d := scale / math.Pow(u, 1/a)
	return time.Duration(min(d, 100*float64(f.p99)))
}

// header returns the response header of a Throttle or Respond fault.
func (f Fault) header() http.Header {
	h := http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
	if f.kind == throttle && f.d > 0 {
		secs := (f.d + time.Second - 1) / time.Second // never sooner than asked
		h["Retry-After"] = []string{strconv.FormatInt(int64(secs), 10)}
		if f.d%time.Second != 0 {
			h["Retry-After-Ms"] = []string{strconv.FormatInt(f.d.Milliseconds(), 10)}
		}
	}
	return h
}

// bodyText returns the response body of a Throttle or Respond fault.
func (f Fault) bodyText() string {
	if f.kind == respond {
		return f.body
	}
	return http.StatusText(f.code) + "\n"
}

// valueOf returns the value of a Value fault as a T, or why it is not one.
func valueOf[T any](f Fault) (T, error) {
	v, ok := f.value.(T)
	if !ok && f.value != nil {
		var zero T
		return zero, argerr.New("chaos.Value", f.value,
			fmt.Sprintf("a %T is not a %v: the wrapped function cannot return it", f.value, reflect.TypeFor[T]()))
	}
	return v, nil
}
