package classify

import "errors"

// Error kinds that an API reports in its error body, which StatusError.Kind
// carries. The names are those of the LLM gateway described in the source
// documents, and OpenAI's name for an exhausted quota.
const (
	KindUpstreamError     = "upstream-error"     // 502: the gateway's own retries of the backend failed
	KindSpendCapExceeded  = "spend-cap-exceeded" // a spending cap was reached: a human decision
	KindInsufficientQuota = "insufficient_quota" // OpenAI's 429 for an exhausted quota or billing limit
)

// ErrUpstream marks a failure that the server already retried on its own (a
// gateway's "upstream error"): retrying it from the client would be one more
// attempt of something that failed several times. A *StatusError with Kind
// KindUpstreamError matches it; wrap other errors with it (fmt.Errorf and %w)
// to get the same treatment.
var ErrUpstream = errors.New("upstream error: the server already retried")

// ErrSpendCap marks a failure caused by a spending cap, quota or billing
// limit. It is never retryable: only a person can raise the cap. A
// *StatusError with Kind KindSpendCapExceeded or KindInsufficientQuota
// matches it.
var ErrSpendCap = errors.New("spend cap exceeded")

// Is reports whether the error's Kind is that of ErrUpstream or ErrSpendCap.
func (e *StatusError) Is(target error) bool {
	if e == nil {
		return false
	}
	switch target {
	case ErrUpstream:
		return e.Kind == KindUpstreamError
	case ErrSpendCap:
		return e.Kind == KindSpendCapExceeded || e.Kind == KindInsufficientQuota
	}
	return false
}

// spendCapRule stops on ErrSpendCap — a quota, spending cap or billing limit
// — whatever the status code: retrying cannot raise a cap. Default applies
// it before anything else.
func (f *facts) spendCapRule() Decision {
	if f.spendCap {
		return Decision{Verdict: Stop, Reason: ReasonSpendCap}
	}
	return Decision{}
}

// upstreamRule stops on ErrUpstream: the server already retried, and a client
// retry would multiply the attempts. UpstreamOnce is the opt-in that allows
// one extra attempt.
func (f *facts) upstreamRule() Decision {
	if f.upstream {
		return Decision{Verdict: Stop, Reason: ReasonUpstream}
	}
	return Decision{}
}

// UpstreamOnce is the opt-in for upstream errors: add it with
// retry.WithClassifier to allow at most one extra attempt after an
// ErrUpstream failure in a call, whatever MaxAttempts says.
func UpstreamOnce(err error) Decision {
	if f := scan(err); f.upstream {
		return Decision{Verdict: Retry, Reason: ReasonUpstream, Limit: 1}
	}
	return Decision{}
}

// Final stops on an error that a retry loop already gave up on: any error
// in the chain with a method Final() bool that returns true, as the retry
// package's *Error has. Retrying it again would multiply the attempts of the
// inner loop (3 × 3 × 3 = 27 calls for three layers): retry in one layer.
// The retry loop applies it before any other classifier.
func Final(err error) Decision {
	if f := scan(err); f.retried {
		return Decision{Verdict: Stop, Reason: ReasonRetriedInside}
	}
	return Decision{}
}
