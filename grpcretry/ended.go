package grpcretry

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// EndedError is what a call returns when the caller's context ended it —
// before the first attempt, during an attempt or during a wait. Its gRPC
// status is the context's (CANCELLED or DEADLINE_EXCEEDED), as grpc-go
// reports a call whose context ended, whatever the last attempt answered;
// it unwraps to the Retrier's *retry.Error, which keeps the last attempt's
// error and every failure.
type EndedError struct {
	Err    error // the *retry.Error that ended the call
	status *status.Status
}

// Error returns the Retrier's message.
func (e *EndedError) Error() string {
	if e == nil || e.Err == nil {
		return "grpcretry: call ended by its context"
	}
	return e.Err.Error()
}

// Unwrap returns the Retrier's error.
func (e *EndedError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// GRPCStatus returns the context's code with the Retrier's message; for an
// EndedError not made by the interceptors, CANCELLED.
func (e *EndedError) GRPCStatus() *status.Status {
	if e == nil || e.status == nil {
		return status.New(codes.Canceled, e.Error())
	}
	return e.status
}
