package grpcretry

import (
	"context"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/policy"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// source says where the status of a call that stopped comes from.
type source uint8

const (
	// fromAnswer: the last attempt's status, the server's answer; the row's
	// code when no attempt answered (a cooldown refused the first one).
	fromAnswer source = iota + 1
	// fromClient: the client refused the call itself: the row's code, with the
	// Retrier's message, whatever the last attempt answered.
	fromClient
	// fromContext: the caller's context ended the call: the context's code, in an
	// *EndedError.
	fromContext
)

// stopStatus is the gRPC status of a call that stopped for one reason.
type stopStatus struct {
	from source
	code codes.Code
}

// stopStatuses gives the status of a failed call for each reason it can
// stop, policy.Stop being the one list of them; a test fails when a reason
// has no row. A local refusal is not UNKNOWN, which says nothing, nor the
// last attempt's code, which was the server's: a limiter's refusal is
// RESOURCE_EXHAUSTED, the code gRPC gives a limit the client itself hit
// (not UNAVAILABLE, which every retry layer around this one would retry); an
// open breaker is UNAVAILABLE, what the breaker says of the dependency; a
// call without the idempotency key the policy requires is
// FAILED_PRECONDITION. A cooldown that stopped the call before it sent
// anything holds back the server's UNAVAILABLE.
var stopStatuses = [...]stopStatus{
	policy.StopPermanent:     {fromAnswer, codes.Unknown},
	policy.StopNotIdempotent: {fromAnswer, codes.Unknown},
	policy.StopAttempts:      {fromAnswer, codes.Unknown},
	policy.StopClassLimit:    {fromAnswer, codes.Unknown},
	policy.StopWaitTooLong:   {fromAnswer, codes.Unavailable},
	policy.StopElapsed:       {fromAnswer, codes.Unavailable},
	policy.StopDeadline:      {fromAnswer, codes.Unavailable},
	policy.StopBudget:        {fromAnswer, codes.ResourceExhausted},
	policy.StopKeyRequired:   {fromClient, codes.FailedPrecondition},
	policy.StopLimited:       {fromClient, codes.ResourceExhausted},
	policy.StopOpen:          {fromClient, codes.Unavailable},
	policy.StopCanceled:      {fromContext, codes.Canceled},
}

// statusOfStop returns stop's row; a reason without one has the last
// attempt's status, or UNKNOWN.
func statusOfStop(stop policy.Stop) stopStatus {
	if int(stop) < len(stopStatuses) && stopStatuses[stop].from != 0 {
		return stopStatuses[stop]
	}
	return stopStatus{fromAnswer, codes.Unknown}
}

// callError returns the error a call that failed with err ends with, its
// status set by stopStatuses: err itself when its last attempt's status is
// the call's, an *EndedError when the caller's context ended the call, and
// otherwise err with a status of its own.
func callError(ctx context.Context, err error) error {
	rerr, ok := err.(*retry.Error)
	if !ok {
		return err // an *InvalidError: nothing ran
	}
	row := statusOfStop(rerr.Stop)
	switch {
	case row.from == fromContext:
		code := codes.Canceled
		if ctx.Err() != nil {
			code = status.FromContextError(ctx.Err()).Code()
		}
		return &EndedError{Err: err, status: status.New(code, err.Error())}
	case row.from == fromAnswer && hasStatus(rerr.Last):
		return err
	}
	return &stoppedError{err: err, status: status.New(row.code, err.Error())}
}

func hasStatus(err error) bool {
	_, ok := status.FromError(err)
	return err != nil && ok
}

// stoppedError is the Retrier's *retry.Error with the status stopStatuses
// gives it: status.Code would otherwise report the last attempt's code —
// UNKNOWN when nothing was sent, or the server's UNAVAILABLE before a
// refused retry, which a retry layer around this one would retry.
type stoppedError struct {
	err    error // the *retry.Error
	status *status.Status
}

func (e *stoppedError) Error() string { return e.err.Error() }

func (e *stoppedError) Unwrap() error { return e.err }

func (e *stoppedError) GRPCStatus() *status.Status { return e.status }
