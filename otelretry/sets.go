package otelretry

import (
	"context"
	"errors"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
)

// Attribute values come from the fixed sets in this file, never from an
// error's text, a key, a URL or anything else a caller or a server chooses:
// a series per distinct value would grow without bound.

// Outcomes of a call: the value of the retry.outcome attribute.
const (
	OutcomeSuccess       = "success"
	OutcomeExhausted     = "exhausted"      // retry.ErrExhausted
	OutcomePermanent     = "permanent"      // retry.ErrPermanent
	OutcomeNotIdempotent = "not_idempotent" // retry.ErrNotIdempotent
	OutcomeWaitTooLong   = "wait_too_long"  // retry.ErrWaitTooLong
	OutcomeDeadline      = "deadline"       // retry.ErrDeadline, or the caller's deadline expired
	OutcomeTimeBudget    = "time_budget"    // retry.ErrElapsed
	OutcomeRetryBudget   = "retry_budget"   // retry.ErrBudget
	OutcomeClassLimit    = "class_limit"    // retry.ErrClassLimit
	OutcomeKeyRequired   = "key_required"   // retry.ErrKeyRequired
	OutcomeLimited       = "limited"        // retry.ErrLimited: the rate limiter refused, nothing sent
	OutcomeCancelled     = "cancelled"      // the caller cancelled the call
	OutcomeOther         = "other"          // a reason this version does not know
)

// outcomes lists every outcome; an outcome's index is the index of its
// precomputed attributes.
var outcomes = [...]string{
	OutcomeSuccess, OutcomeExhausted, OutcomePermanent, OutcomeNotIdempotent,
	OutcomeWaitTooLong, OutcomeDeadline, OutcomeTimeBudget, OutcomeRetryBudget,
	OutcomeClassLimit, OutcomeKeyRequired, OutcomeLimited, OutcomeCancelled, OutcomeOther,
}

const (
	iSuccess = iota
	iExhausted
	iPermanent
	iNotIdempotent
	iWaitTooLong
	iDeadline
	iTimeBudget
	iRetryBudget
	iClassLimit
	iKeyRequired
	iLimited
	iCancelled
	iOther
)

// sentinels maps the loop's reasons to outcomes, in the order errors.Is
// tries them.
var sentinels = [...]struct {
	err error
	i   int
}{
	{retry.ErrExhausted, iExhausted},
	{retry.ErrPermanent, iPermanent},
	{retry.ErrNotIdempotent, iNotIdempotent},
	{retry.ErrWaitTooLong, iWaitTooLong},
	{retry.ErrDeadline, iDeadline},
	{retry.ErrElapsed, iTimeBudget},
	{retry.ErrBudget, iRetryBudget},
	{retry.ErrClassLimit, iClassLimit},
	{retry.ErrKeyRequired, iKeyRequired},
	{retry.ErrLimited, iLimited},
	{context.DeadlineExceeded, iDeadline},
	{context.Canceled, iCancelled},
}

// outcomeOf returns the index of the outcome of a call that gave up with
// reason: a sentinel's, or, for a context cause of the caller's own, the
// state of ctx.
func outcomeOf(ctx context.Context, reason error) int {
	for _, s := range sentinels {
		if reason == s.err {
			return s.i
		}
	}
	for _, s := range sentinels {
		if errors.Is(reason, s.err) {
			return s.i
		}
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return iDeadline
	case ctx.Err() != nil:
		return iCancelled // a cause given to context.WithCancelCause
	}
	return iOther
}

// Verdicts of an attempt: the value of the retry.verdict attribute.
const (
	VerdictSuccess = "success"
	VerdictRetry   = "retry" // the classifier said the failure is transient
	VerdictStop    = "stop"  // the classifier said another attempt would fail the same way
)

// ClassOther is the retry.class of a failure whose classification reason is
// not one of the built-in classifiers' (a custom classifier's own).
const ClassOther = "other"

// ClassBreakerRejected is the reason breaker.Classify gives a breaker's
// refusal.
const ClassBreakerRejected = "circuit breaker rejected"

// classes is the fixed set of retry.class values: the reasons of the
// built-in classifiers, grpcretry's status table, and breaker.Classify's.
var classes = [...]string{
	classify.ReasonUnclassified, classify.ReasonMarkedPermanent, classify.ReasonMarkedRetryable,
	classify.ReasonCanceled, classify.ReasonTimeout, classify.ReasonConnectTimeout,
	classify.ReasonConnReset, classify.ReasonConnRefused, classify.ReasonConnAborted,
	classify.ReasonBrokenPipe, classify.ReasonUnreachable, classify.ReasonConnClosed,
	classify.ReasonDNS, classify.ReasonTooManyRequests, classify.ReasonServerError,
	classify.ReasonBadGateway, classify.ReasonUnavailable, classify.ReasonGatewayTimeout,
	classify.ReasonOtherServerError, classify.ReasonNotImplemented, classify.ReasonClientError,
	classify.ReasonContentFiltered, classify.ReasonEmptyOutput, classify.ReasonResultNotAccepted,
	classify.ReasonRetriedInside, classify.ReasonUpstream, classify.ReasonSpendCap,
	classify.ReasonCooldown, classify.ReasonCertificate, classify.ReasonInvalidRequest,
	classify.ReasonTooManyRedirects,
	// grpcretry's status table, whose reasons the root module defines.
	classify.ReasonGRPCCanceled, classify.ReasonGRPCUnknown, classify.ReasonGRPCInvalidArgument,
	classify.ReasonGRPCDeadlineExceeded, classify.ReasonGRPCNotFound, classify.ReasonGRPCAlreadyExists,
	classify.ReasonGRPCPermissionDenied, classify.ReasonGRPCResourceExhausted,
	classify.ReasonGRPCFailedPrecondition, classify.ReasonGRPCAborted, classify.ReasonGRPCOutOfRange,
	classify.ReasonGRPCUnimplemented, classify.ReasonGRPCInternal, classify.ReasonGRPCUnavailable,
	classify.ReasonGRPCDataLoss, classify.ReasonGRPCUnauthenticated, classify.ReasonGRPCPushbackStop,
	classify.ReasonGRPCCallerDeadline, classify.ReasonGRPCReplayOverflow,
	ClassBreakerRejected, ClassOther,
}
