package limit

import (
	"context"
	"time"

	"github.com/retrykit/retry/classify"
)

// Limiter paces the attempts of every call that shares it, so that callers
// who share one rate limit (an API key, a dependency) stop spending requests
// to learn that it holds.
//
// The retry loop (retry.WithLimiter) asks Acquire before every attempt, the
// first one included, and tells Record how the attempt ended. One Limiter is
// shared by any number of Retriers and goroutines: its methods must be safe
// for concurrent use and quick, since they run on every attempt.
type Limiter interface {
	// Acquire asks permission for one attempt, and returns true when it may
	// be sent: at once, or after waiting its turn. It waits at most maxWait,
	// and no longer than ctx lasts; it returns false when it refuses the
	// attempt, when the attempt's turn would come later than maxWait, or
	// when ctx ended first. Its fast path must not allocate.
	Acquire(ctx context.Context, maxWait time.Duration) bool
	// Record tells the limiter how an attempt it let through ended.
	Record(ctx context.Context, o Outcome)
}

// Result is what an attempt's end says about the shared rate limit.
type Result uint8

const (
	// Accepted: the server answered without throttling (a success, or an
	// answer that is not about load, such as a 404).
	Accepted Result = iota + 1
	// Throttled: the server refused the attempt for its rate (HTTP 429, or
	// a gRPC RESOURCE_EXHAUSTED with a wait to retry after).
	Throttled
	// Other: the attempt ended without a word from the server about its
	// rate (a connection error, the caller's cancellation).
	Other
	// TimedOut: the attempt got no answer in time after it was sent. A
	// dependency that stops answering in time is often one that is
	// overloaded: an Adaptive configured with Timeouts takes it as a
	// throttled answer; otherwise it counts as Other.
	TimedOut
)

// String returns "accepted", "throttled", "other" or "timed out".
func (r Result) String() string {
	switch r {
	case Accepted:
		return "accepted"
	case Throttled:
		return "throttled"
	case Other:
		return "other"
	case TimedOut:
		return "timed out"
	}
	return "result(?)"
}

// Outcome is what a Limiter learns of one attempt.
type Outcome struct {
	Result Result
	// RetryAfter is the wait the server asked for with a throttled answer
	// (Retry-After); 0 if none.
	RetryAfter time.Duration
}

// answered reports whether a failure that stops a call came from the
// server's answer, rather than from the caller, the client's own machinery
// or an inner retry loop.
func answered(reason string) bool {
	switch reason {
	case classify.ReasonCanceled, classify.ReasonRetriedInside, classify.ReasonUnclassified,
		// gRPC: CANCELLED is, nearly always, the caller's own; so is a
		// deadline that had passed; a stream's replay overflow is local; a
		// pushback trailer says "do not retry this call", not "send less",
		// and the code it came with is not kept.
		classify.ReasonGRPCCanceled, classify.ReasonGRPCCallerDeadline,
		classify.ReasonGRPCReplayOverflow, classify.ReasonGRPCPushbackStop:
		return false
	}
	return true
}

// OutcomeOf classifies an attempt's end for a Limiter: err nil is Accepted;
// a failure classified as an HTTP 429 (classify.ReasonTooManyRequests) is
// Throttled, with the server's Retry-After, and so is a gRPC
// RESOURCE_EXHAUSTED that the server gave a wait to retry after
// (classify.ReasonGRPCResourceExhausted, classified Retry: grpcretry does so
// when the server sets a pushback trailer or a RetryInfo detail); a failure
// that stops the call (a 4xx, a gRPC NOT_FOUND, say) was answered by the
// server, so it is Accepted; an attempt that timed out after it was sent
// (classify.ReasonTimeout, a gRPC DEADLINE_EXCEEDED of the attempt's own, a
// decision marked Timeout) is TimedOut; any other failure — a connection error, a 5xx,
// gRPC UNAVAILABLE, the caller's cancellation, a RESOURCE_EXHAUSTED without
// a wait (a quota, not a rate), an error nothing recognised — is Other.
func OutcomeOf(err error, d classify.Decision) Outcome {
	switch {
	case err == nil:
		return Outcome{Result: Accepted}
	case d.Reason == classify.ReasonTooManyRequests,
		d.Reason == classify.ReasonGRPCResourceExhausted && d.Verdict == classify.Retry:
		return Outcome{Result: Throttled, RetryAfter: d.RetryAfter}
	case d.Reason == classify.ReasonGRPCResourceExhausted:
		return Outcome{Result: Other}
	case d.Timeout || d.Reason == classify.ReasonTimeout || d.Reason == classify.ReasonGRPCDeadlineExceeded:
		return Outcome{Result: TimedOut}
	case d.Verdict == classify.Stop && answered(d.Reason):
		return Outcome{Result: Accepted}
	}
	return Outcome{Result: Other}
}
