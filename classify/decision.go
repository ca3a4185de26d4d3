package classify

import (
	"strconv"
	"time"
)

// Verdict is a classifier's answer.
type Verdict uint8

const (
	// NoOpinion lets the next classifier in the chain decide.
	NoOpinion Verdict = iota
	// Retry means the failure is transient: another attempt may succeed.
	Retry
	// Stop means another attempt would fail the same way.
	Stop
)

// String returns "no opinion", "retry" or "stop".
func (v Verdict) String() string {
	switch v {
	case NoOpinion:
		return "no opinion"
	case Retry:
		return "retry"
	case Stop:
		return "stop"
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// Reasons reported by the built-in classifiers. They are stable labels, fit
// for logs and metrics, and identify a class of failure for Limit.
const (
	ReasonUnclassified      = "unclassified"
	ReasonMarkedPermanent   = "marked permanent"
	ReasonMarkedRetryable   = "marked retryable"
	ReasonCanceled          = "canceled"
	ReasonTimeout           = "timeout"
	ReasonConnectTimeout    = "connect timeout"
	ReasonConnReset         = "connection reset"
	ReasonConnRefused       = "connection refused"
	ReasonConnAborted       = "connection aborted"
	ReasonBrokenPipe        = "broken pipe"
	ReasonUnreachable       = "network unreachable"
	ReasonConnClosed        = "connection closed"
	ReasonDNS               = "dns temporary failure"
	ReasonTooManyRequests   = "http 429"
	ReasonServerError       = "http 500"
	ReasonBadGateway        = "http 502"
	ReasonUnavailable       = "http 503"
	ReasonGatewayTimeout    = "http 504"
	ReasonOtherServerError  = "http 5xx"
	ReasonNotImplemented    = "http 5xx unsupported"
	ReasonClientError       = "http 4xx"
	ReasonContentFiltered   = "content filtered"
	ReasonEmptyOutput       = "empty output"
	ReasonResultNotAccepted = "result not accepted"
	ReasonRetriedInside     = "already retried by an inner loop"
	ReasonUpstream          = "upstream error: the server already retried"
	ReasonSpendCap          = "spend cap exceeded"
	ReasonCertificate       = "tls certificate rejected"
	ReasonInvalidRequest    = "invalid request"
	ReasonTooManyRedirects  = "too many redirects"
)

// Reasons of the idempotency protocol (package idempotency's client, its
// store and the Idempotency-Key answers of a server).
const (
	ReasonKeyInProgress = "idempotency key in progress"
	ReasonKeyReuse      = "idempotency key reused"
	ReasonNotRetained   = "idempotent result not retained"
	ReasonStoredFailure = "idempotent failure kept"
	ReasonClaimLost     = "idempotency claim lost"
)

// Decision is what a classifier says about one failure.
//
// The zero value is "no opinion".
type Decision struct {
	Verdict Verdict
	// Reason is a short, stable label for the class of failure, such as
	// "http 503" or "connection reset".
	Reason string
	// RetryAfter is the wait the server asked for (Retry-After); 0 if none.
	// It is authoritative: the retry loop never retries earlier.
	RetryAfter time.Duration
	// Limit, when positive, is how many times this class of failure (same
	// Reason) may be retried in one call, whatever the policy's MaxAttempts.
	Limit int
	// Timeout reports that the attempt timed out after the request may have
	// reached the server: the operation may still be running, so it is
	// retried only if it is idempotent or carries an idempotency key. A
	// connect timeout, which sent nothing, is not marked.
	Timeout bool
}

// String describes the decision, e.g. "retry (http 503, after 2s)".
func (d Decision) String() string {
	s := d.Verdict.String()
	if d.Reason == "" && d.RetryAfter == 0 && d.Limit == 0 && !d.Timeout {
		return s
	}
	s += " (" + d.Reason
	if d.RetryAfter > 0 {
		s += ", after " + d.RetryAfter.String()
	}
	if d.Limit > 0 {
		s += ", at most " + strconv.Itoa(d.Limit) + " per call"
	}
	if d.Timeout {
		s += ", timed out"
	}
	return s + ")"
}

// Func classifies an error. It must be pure and safe for concurrent use, and
// return the zero Decision for errors it does not recognise.
type Func func(err error) Decision

// Chain returns a classifier that asks each of fs in order and returns the
// first answer that is not NoOpinion. Nil entries are skipped.
func Chain(fs ...Func) Func {
	list := make([]Func, 0, len(fs))
	for _, f := range fs {
		if f != nil {
			list = append(list, f)
		}
	}
	return func(err error) Decision {
		for _, f := range list {
			if d := f(err); d.Verdict != NoOpinion {
				return d
			}
		}
		return Decision{}
	}
}
