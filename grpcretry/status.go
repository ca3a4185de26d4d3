package grpcretry

import (
	"context"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/retrykit/retry/classify"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Reasons of the status table: stable labels, fit for logs and metric
// attributes. A class with a Limit is counted by its Reason. Each is the
// classify package's ReasonGRPC… of the same name, which otelretry reports
// as a retry.class of its own.
const (
	ReasonCanceled           = classify.ReasonGRPCCanceled
	ReasonUnknown            = classify.ReasonGRPCUnknown
	ReasonInvalidArgument    = classify.ReasonGRPCInvalidArgument
	ReasonDeadlineExceeded   = classify.ReasonGRPCDeadlineExceeded
	ReasonNotFound           = classify.ReasonGRPCNotFound
	ReasonAlreadyExists      = classify.ReasonGRPCAlreadyExists
	ReasonPermissionDenied   = classify.ReasonGRPCPermissionDenied
	ReasonResourceExhausted  = classify.ReasonGRPCResourceExhausted
	ReasonFailedPrecondition = classify.ReasonGRPCFailedPrecondition
	ReasonAborted            = classify.ReasonGRPCAborted
	ReasonOutOfRange         = classify.ReasonGRPCOutOfRange
	ReasonUnimplemented      = classify.ReasonGRPCUnimplemented
	ReasonInternal           = classify.ReasonGRPCInternal
	ReasonUnavailable        = classify.ReasonGRPCUnavailable
	ReasonDataLoss           = classify.ReasonGRPCDataLoss
	ReasonUnauthenticated    = classify.ReasonGRPCUnauthenticated
	// ReasonPushbackStop: the server's grpc-retry-pushback-ms trailer was
	// negative, malformed or repeated, which gRFC A6 defines as "do not retry".
	ReasonPushbackStop = classify.ReasonGRPCPushbackStop
	// ReasonCallerDeadline: DEADLINE_EXCEEDED after the caller's own deadline
	// had passed; no attempt could finish in time.
	ReasonCallerDeadline = classify.ReasonGRPCCallerDeadline
)

// PushbackTrailer is the trailer in which a server sets the wait before the
// next attempt, in milliseconds (gRFC A6).
const PushbackTrailer = "grpc-retry-pushback-ms"

// table is the decision for each code, before the server's wait and the
// idempotency of the call are taken into account. See the package
// documentation for why each row is what it is.
var table = [...]classify.Decision{
	codes.Canceled:           {Verdict: classify.Stop, Reason: ReasonCanceled},
	codes.Unknown:            {Verdict: classify.Retry, Reason: ReasonUnknown, Limit: 1},
	codes.InvalidArgument:    {Verdict: classify.Stop, Reason: ReasonInvalidArgument},
	codes.DeadlineExceeded:   {Verdict: classify.Retry, Reason: ReasonDeadlineExceeded, Timeout: true},
	codes.NotFound:           {Verdict: classify.Stop, Reason: ReasonNotFound},
	codes.AlreadyExists:      {Verdict: classify.Stop, Reason: ReasonAlreadyExists},
	codes.PermissionDenied:   {Verdict: classify.Stop, Reason: ReasonPermissionDenied},
	codes.ResourceExhausted:  {Verdict: classify.Stop, Reason: ReasonResourceExhausted},
	codes.FailedPrecondition: {Verdict: classify.Stop, Reason: ReasonFailedPrecondition},
	codes.Aborted:            {Verdict: classify.Stop, Reason: ReasonAborted},
	codes.OutOfRange:         {Verdict: classify.Stop, Reason: ReasonOutOfRange},
	codes.Unimplemented:      {Verdict: classify.Stop, Reason: ReasonUnimplemented},
	codes.Internal:           {Verdict: classify.Retry, Reason: ReasonInternal, Limit: 1},
	codes.Unavailable:        {Verdict: classify.Retry, Reason: ReasonUnavailable},
	codes.DataLoss:           {Verdict: classify.Stop, Reason: ReasonDataLoss},
	codes.Unauthenticated:    {Verdict: classify.Stop, Reason: ReasonUnauthenticated},
}

// Classify is the status table as a classify.Func: it classifies an error
// that carries a gRPC status (status.FromError finds one), reading the
// server's wait from a google.rpc.RetryInfo detail, and returns NoOpinion
// for any other error and for OK. It cannot see the pushback trailer, which
// is not part of the error: the interceptors read it, and use the same table.
//
// Use it with retry.WithClassifier for gRPC calls made without the
// interceptors.
func Classify(err error) classify.Decision {
	s, ok := statusOf(err)
	if !ok {
		return classify.Decision{}
	}
	return decide(s, nil)
}

// statusOf returns the status err carries; false for nil, for OK and for
// an error without one.
func statusOf(err error) (*status.Status, bool) {
	if err == nil {
		return nil, false
	}
	s, ok := status.FromError(err)
	if !ok || s.Code() == codes.OK || int(s.Code()) >= len(table) {
		return nil, false
	}
	return s, true
}

// decide applies the table to s and the server's wait: the pushback
// trailer (from trailer, which may be nil) and the RetryInfo detail.
func decide(s *status.Status, trailer metadata.MD) classify.Decision {
	d := table[s.Code()]
	wait, said, ok := pushback(trailer)
	if !ok {
		return classify.Decision{Verdict: classify.Stop, Reason: ReasonPushbackStop}
	}
	if info, found := retryInfo(s); found && (!said || info > wait) {
		wait, said = info, true
	}
	if !said {
		return d
	}
	if s.Code() == codes.ResourceExhausted { // the server said when: a rate, not a quota
		d.Verdict = classify.Retry
	}
	if d.Verdict == classify.Retry {
		d.RetryAfter = wait
	}
	return d
}

// maxMillis is the largest wait in milliseconds that a time.Duration holds;
// a longer one saturates.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// pushback reads the grpc-retry-pushback-ms trailer: the wait, whether the
// server set one, and false when the trailer says not to retry (negative,
// malformed, or more than one value, as grpc-go reads it).
func pushback(trailer metadata.MD) (wait time.Duration, said, ok bool) {
	vs := trailer[PushbackTrailer]
	switch len(vs) {
	case 0:
		return 0, false, true
	case 1:
	default:
		return 0, false, false
	}
	ms, err := strconv.ParseInt(vs[0], 10, 64)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange) && vs[0][0] != '-':
		ms = maxMillis
	case err != nil || ms < 0:
		return 0, false, false
	}
	return time.Duration(min(ms, maxMillis)) * time.Millisecond, true, true
}

// retryInfo reads the first google.rpc.RetryInfo detail of s. A negative
// delay counts as none given.
func retryInfo(s *status.Status) (time.Duration, bool) {
	for _, d := range s.Details() {
		if info, ok := d.(*errdetails.RetryInfo); ok && info.GetRetryDelay() != nil {
			delay := info.GetRetryDelay()
			if err := delay.CheckValid(); err != nil || delay.AsDuration() < 0 {
				return 0, false
			}
			return delay.AsDuration(), true // AsDuration saturates
		}
	}
	return 0, false
}

// pastDeadline reports whether ctx's deadline has passed by the clock,
// which may be a moment before the context itself says so.
func pastDeadline(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}
