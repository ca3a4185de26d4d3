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

// pushbackTrailer is the trailer in which a server sets the wait before the
// next attempt, in milliseconds (gRFC A6).
const pushbackTrailer = "grpc-retry-pushback-ms"

// table is the decision for each code, before the server's wait and the
// idempotency of the call are taken into account. See the package
// documentation for why each row is what it is. A code past its end has
// UNKNOWN's row (see row).
var table = [...]classify.Decision{
	codes.Canceled:           {Verdict: classify.Stop, Reason: classify.ReasonGRPCCanceled},
	codes.Unknown:            {Verdict: classify.Retry, Reason: classify.ReasonGRPCUnknown, Limit: 1},
	codes.InvalidArgument:    {Verdict: classify.Stop, Reason: classify.ReasonGRPCInvalidArgument},
	codes.DeadlineExceeded:   {Verdict: classify.Retry, Reason: classify.ReasonGRPCDeadlineExceeded, Timeout: true},
	codes.NotFound:           {Verdict: classify.Stop, Reason: classify.ReasonGRPCNotFound},
	codes.AlreadyExists:      {Verdict: classify.Stop, Reason: classify.ReasonGRPCAlreadyExists},
	codes.PermissionDenied:   {Verdict: classify.Stop, Reason: classify.ReasonGRPCPermissionDenied},
	codes.ResourceExhausted:  {Verdict: classify.Stop, Reason: classify.ReasonGRPCResourceExhausted},
	codes.FailedPrecondition: {Verdict: classify.Stop, Reason: classify.ReasonGRPCFailedPrecondition},
	codes.Aborted:            {Verdict: classify.Stop, Reason: classify.ReasonGRPCAborted},
	codes.OutOfRange:         {Verdict: classify.Stop, Reason: classify.ReasonGRPCOutOfRange},
	codes.Unimplemented:      {Verdict: classify.Stop, Reason: classify.ReasonGRPCUnimplemented},
	codes.Internal:           {Verdict: classify.Retry, Reason: classify.ReasonGRPCInternal, Limit: 1},
	codes.Unavailable:        {Verdict: classify.Retry, Reason: classify.ReasonGRPCUnavailable},
	codes.DataLoss:           {Verdict: classify.Stop, Reason: classify.ReasonGRPCDataLoss},
	codes.Unauthenticated:    {Verdict: classify.Stop, Reason: classify.ReasonGRPCUnauthenticated},
}

// row is the table's decision for code. A code outside the table — one a
// server made up, or a later version of gRPC added — is what grpc-go makes
// of an error it cannot map, UNKNOWN: retried once, and only if the
// attempt may run again.
func row(code codes.Code) classify.Decision {
	if int(code) < len(table) && code != codes.OK {
		return table[code]
	}
	return table[codes.Unknown]
}

// Classify is the status table as a classify.Func: it classifies an error
// that carries a gRPC status (status.FromError finds one), reading the
// server's wait from a google.rpc.RetryInfo detail, and returns NoOpinion
// for any other error and for OK. A code outside the table has UNKNOWN's
// row. It cannot see the pushback trailer, which is not part of the error,
// nor whether the call reached the server: the interceptors know both, and
// an error they classified keeps their decision.
//
// Use it with retry.WithClassifier for gRPC calls made without the
// interceptors.
func Classify(err error) classify.Decision {
	if d := classify.Markers(err); d.Verdict != classify.NoOpinion {
		return d // classified by the interceptors, or marked by its maker
	}
	s, ok := statusOf(err)
	if !ok {
		return classify.Decision{}
	}
	d := row(s.Code())
	if wait, said := retryInfo(s); said {
		d = withWait(d, s.Code(), wait)
	}
	return d
}

// statusOf returns the status err carries; false for nil, for OK and for
// an error without one.
func statusOf(err error) (*status.Status, bool) {
	if err == nil {
		return nil, false
	}
	s, ok := status.FromError(err)
	if !ok || s.Code() == codes.OK {
		return nil, false
	}
	return s, true
}

// withWait is d once the server said when to come back: RESOURCE_EXHAUSTED
// becomes retryable — a rate, not a quota — and a retry waits at least as
// long. A wait never turns another final row into a retry (Spanner sends
// RetryInfo with ABORTED, for the whole transaction).
func withWait(d classify.Decision, code codes.Code, wait time.Duration) classify.Decision {
	if code == codes.ResourceExhausted {
		d.Verdict = classify.Retry
	}
	if d.Verdict == classify.Retry {
		d.RetryAfter = wait
	}
	return d
}

// failed turns an attempt's error into one the Retrier's classifiers read:
// the status table's verdict — protocol knowledge, which a caller's
// classifier (retry.WithClassifier) may override — marked with
// classify.Mark, and what the server said about retrying — its pushback or
// RetryInfo, which no classifier overrides — with classify.Said. sent
// reports that the attempt had a transport stream: the server may have seen
// it. An error without a status is returned as it is.
func (i *Interceptor) failed(ctx context.Context, err error, trailer metadata.MD, sent bool, method string) error {
	s, ok := statusOf(err)
	switch {
	case !ok:
		return err
	case s.Code() == codes.DeadlineExceeded && pastDeadline(ctx):
		// The context's timer fires any moment now: wait for it, so that the
		// call ends with the caller's own deadline, as when it came first.
		if done := ctx.Done(); done != nil {
			<-done
		}
		return classify.Mark(err, classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonGRPCCallerDeadline})
	}
	d := row(s.Code())
	wait, said, stop := serverWait(s, trailer)
	if said {
		d = withWait(d, s.Code(), wait)
	}
	if d.Verdict == classify.Retry {
		// The idempotency gate: an attempt that reached the server may have
		// been processed; a Timeout decision is retried only for an
		// idempotent or keyed call (the Retrier checks the key and
		// retry.Idempotent()). One that never left the client repeats nothing.
		d.Timeout = sent && !i.isIdempotent(method)
	}
	err = classify.Mark(err, d)
	switch {
	case stop:
		return classify.Said(err, classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonGRPCPushbackStop})
	case said:
		return classify.Said(err, classify.Decision{RetryAfter: wait})
	}
	return err
}

// serverWait reads what the server said about retrying: the wait of the
// pushback trailer (from trailer, which may be nil) or the RetryInfo
// detail, the longer of the two; whether it set one; and whether the
// trailer said not to retry.
func serverWait(s *status.Status, trailer metadata.MD) (wait time.Duration, said, stop bool) {
	wait, said, ok := pushback(trailer)
	if !ok {
		return 0, false, true
	}
	if info, found := retryInfo(s); found && (!said || info > wait) {
		wait, said = info, true
	}
	return wait, said, false
}

// maxMillis is the largest wait in milliseconds that a time.Duration holds;
// a longer one saturates.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// pushback reads the grpc-retry-pushback-ms trailer: the wait, whether the
// server set one, and false when the trailer says not to retry (negative,
// malformed, or more than one value, as grpc-go reads it).
func pushback(trailer metadata.MD) (wait time.Duration, said, ok bool) {
	vs := trailer[pushbackTrailer]
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
