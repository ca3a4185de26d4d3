package classify

import (
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

// Retryable marks err as transient, whatever other classifiers would say
// (except ErrSpendCap). It returns nil for a nil err.
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

// Default recognises every failure of the table in the package documentation,
// in one walk of the error's tree, and applies what the server said (Said):
// its "do not retry" stops, its wait is the shortest wait. It returns
// NoOpinion for anything else (with the server's wait, if it asked for one).
func Default(err error) Decision {
	if err == nil {
		return Decision{}
	}
	f := scan(err)
	return f.server(f.rules())
}

// rules applies the rules of Default in order of precedence, called directly
// so that f stays on the stack.
func (f *facts) rules() Decision {
	if f.retried { // an inner loop's final error: see Final
		return Decision{Verdict: Stop, Reason: ReasonRetriedInside}
	}
	if d := f.spendCapRule(); d.Verdict != NoOpinion {
		return d
	}
	if d := f.markerRule(); d.Verdict != NoOpinion {
		return d
	}
	if d := f.contextRule(); d.Verdict != NoOpinion {
		return d
	}
	if d := f.upstreamRule(); d.Verdict != NoOpinion {
		return d
	}
	if d := f.httpRule(); d.Verdict != NoOpinion {
		return d
	}
	if d := f.sqlRule(); d.Verdict != NoOpinion {
		return d
	}
	if d := f.networkRule(); d.Verdict != NoOpinion {
		return d
	}
	if d := f.timeoutRule(); d.Verdict != NoOpinion {
		return d
	}
	return f.misconfiguredRule()
}

// Mark marks err with the decision d, whatever other classifiers would say
// (except ErrSpendCap): the general form of Permanent, Retryable and
// WithRetryAfter, for a decision with its own Reason. It returns nil for a nil
// err.
func Mark(err error, d Decision) error {
	if err == nil {
		return nil
	}
	d.RetryAfter = max(d.RetryAfter, 0)
	return &marked{err, d}
}

// Markers classifies errors marked with Permanent, Retryable, WithRetryAfter
// and Mark. The outermost marker wins.
func Markers(err error) Decision { f := scan(err); return f.markerRule() }

func (f *facts) markerRule() Decision {
	if f.marker != nil {
		return f.marker.d
	}
	return Decision{}
}

// contextRule stops on context.Canceled: somebody gave up on the work. (An
// expired deadline is a timeout; the retry loop recognises its caller's own
// deadline before any classifier runs.)
func (f *facts) contextRule() Decision {
	if f.canceled {
		return Decision{Verdict: Stop, Reason: ReasonCanceled}
	}
	return Decision{}
}

// Timeouts retries errors that report Timeout() == true anywhere in their
// chain (context.DeadlineExceeded, os.ErrDeadlineExceeded, syscall.ETIMEDOUT,
// net and url errors).
//
// A connect timeout — a *net.OpError with Op "dial" that timed out, however
// net/http wraps it, or net/http's "TLS handshake timeout" — sent nothing:
// it is retried like a refused connection, as "connect timeout", and not
// marked Timeout. Every other timeout is marked Timeout: the request may have
// reached the server, which may still be running it. An error that carries
// context.DeadlineExceeded itself is never a connect timeout: a deadline
// belongs to whoever set it, and the retry loop recognises its caller's own
// before any classifier runs.
func Timeouts(err error) Decision { f := scan(err); return f.timeoutRule() }

func (f *facts) timeoutRule() Decision {
	switch {
	case !f.timeout:
		return Decision{}
	case !f.deadline && (f.dialTimeout || f.leafIs(tlsHandshakeTimeout)):
		return Decision{Verdict: Retry, Reason: ReasonConnectTimeout}
	}
	return Decision{Verdict: Retry, Reason: ReasonTimeout, Timeout: true}
}

// networkRule retries connection failures: reset, refused, aborted, broken
// pipe, unreachable network or host, a connection closed mid-response
// (io.ErrUnexpectedEOF, or io.EOF inside an HTTP client's *url.Error: the
// server hung up before answering) and temporary DNS failures. A bare io.EOF
// means too many things to be classified.
func (f *facts) networkRule() Decision {
	if reason := errnoReason(f.errno); reason != "" {
		return Decision{Verdict: Retry, Reason: reason}
	}
	if f.unexpectedEOF || (f.urlError && f.eof) {
		return Decision{Verdict: Retry, Reason: ReasonConnClosed}
	}
	if f.dns != nil && f.dns.IsTemporary && !f.dns.IsTimeout {
		return Decision{Verdict: Retry, Reason: ReasonDNS}
	}
	return Decision{}
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
