package classify

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"syscall"
	"time"
)

// marked wraps an error with the decision its creator asserted.
type marked struct {
	err error
	d   Decision
}

func (m *marked) Error() string { return m.err.Error() }
func (m *marked) Unwrap() error { return m.err }

// Permanent marks err as not worth retrying. It returns nil for a nil err.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &marked{err, Decision{Verdict: Stop, Reason: ReasonMarkedPermanent}}
}

// Retryable marks err as transient, whatever other classifiers would say.
// It returns nil for a nil err.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return &marked{err, Decision{Verdict: Retry, Reason: ReasonMarkedRetryable}}
}

// WithRetryAfter marks err as transient and asks for a wait of at least d
// before the next attempt. It returns nil for a nil err.
func WithRetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &marked{err, Decision{Verdict: Retry, Reason: ReasonMarkedRetryable, RetryAfter: max(d, 0)}}
}

// Markers classifies errors marked with Permanent, Retryable and
// WithRetryAfter. The outermost marker wins.
func Markers(err error) Decision {
	if m, ok := find[*marked](err); ok {
		return m.d
	}
	return Decision{}
}

// Context stops on context.Canceled: somebody gave up on the work. (An
// expired deadline is a timeout; the retry loop recognises its caller's own
// deadline before any classifier runs.)
func Context(err error) Decision {
	if errors.Is(err, context.Canceled) {
		return Decision{Verdict: Stop, Reason: ReasonCanceled}
	}
	return Decision{}
}

type timeouter interface{ Timeout() bool }

// Timeouts retries errors that report Timeout() == true anywhere in their
// chain (context.DeadlineExceeded, os.ErrDeadlineExceeded, net and url
// errors), marked Timeout: the operation may still be running.
func Timeouts(err error) Decision {
	if walk(err, isTimeout) { // syscall.ETIMEDOUT reports Timeout() too
		return Decision{Verdict: Retry, Reason: ReasonTimeout, Timeout: true}
	}
	return Decision{}
}

func isTimeout(err error) bool {
	t, ok := err.(timeouter)
	return ok && t.Timeout()
}

// Network retries connection failures: reset, refused, aborted, broken pipe,
// unreachable network or host, a connection closed mid-response
// (io.ErrUnexpectedEOF) and temporary DNS failures.
func Network(err error) Decision {
	if errno, ok := find[syscall.Errno](err); ok {
		if reason := errnoReason(errno); reason != "" {
			return Decision{Verdict: Retry, Reason: reason}
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || hungUp(err) {
		return Decision{Verdict: Retry, Reason: ReasonConnClosed}
	}
	if dns, ok := find[*net.DNSError](err); ok && dns.IsTemporary && !dns.IsTimeout {
		return Decision{Verdict: Retry, Reason: ReasonDNS}
	}
	return Decision{}
}

// hungUp reports an HTTP client error whose cause is io.EOF: the server closed
// the connection before answering. (A bare io.EOF means too many things to
// be classified.)
func hungUp(err error) bool {
	u, ok := find[*url.Error](err)
	return ok && errors.Is(u.Err, io.EOF)
}

func errnoReason(errno syscall.Errno) string {
	switch errno {
	case syscall.ECONNRESET:
		return ReasonConnReset
	case syscall.ECONNREFUSED:
		return ReasonConnRefused
	case syscall.ECONNABORTED:
		return ReasonConnAborted
	case syscall.EPIPE:
		return ReasonBrokenPipe
	case syscall.ENETUNREACH, syscall.EHOSTUNREACH:
		return ReasonUnreachable
	}
	return ""
}

// find returns the first error of type T in err's tree, walking Unwrap() error
// and Unwrap() []error depth first, as errors.As does, without reflection.
func find[T any](err error) (T, bool) {
	for err != nil {
		if t, ok := err.(T); ok {
			return t, true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if t, ok := find[T](e); ok {
					return t, true
				}
			}
			err = nil
		default:
			err = nil
		}
	}
	var zero T
	return zero, false
}

// walk reports whether pred holds for any error in err's tree.
func walk(err error, pred func(error) bool) bool {
	for err != nil {
		if pred(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if walk(e, pred) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}
