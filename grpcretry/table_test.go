package grpcretry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/grpcretry"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// Each row of the status table, against a real server that always fails
// with the row's code, on a method declared idempotent (so that the gate
// plays no part) and a Retrier of at most 3 attempts.
func TestEachRowOfTheTableAgainstARealServer(t *testing.T) {
	rows := []struct {
		code   codes.Code
		reason string
		calls  int
		stop   error
	}{
		{codes.Unavailable, grpcretry.ReasonUnavailable, 3, retry.ErrExhausted},
		{codes.Canceled, grpcretry.ReasonCanceled, 1, retry.ErrPermanent},
		{codes.InvalidArgument, grpcretry.ReasonInvalidArgument, 1, retry.ErrPermanent},
		{codes.NotFound, grpcretry.ReasonNotFound, 1, retry.ErrPermanent},
		{codes.AlreadyExists, grpcretry.ReasonAlreadyExists, 1, retry.ErrPermanent},
		{codes.PermissionDenied, grpcretry.ReasonPermissionDenied, 1, retry.ErrPermanent},
		{codes.Unauthenticated, grpcretry.ReasonUnauthenticated, 1, retry.ErrPermanent},
		{codes.FailedPrecondition, grpcretry.ReasonFailedPrecondition, 1, retry.ErrPermanent},
		{codes.OutOfRange, grpcretry.ReasonOutOfRange, 1, retry.ErrPermanent},
		{codes.Unimplemented, grpcretry.ReasonUnimplemented, 1, retry.ErrPermanent},
		{codes.DataLoss, grpcretry.ReasonDataLoss, 1, retry.ErrPermanent},
		{codes.ResourceExhausted, grpcretry.ReasonResourceExhausted, 1, retry.ErrPermanent},
		{codes.Aborted, grpcretry.ReasonAborted, 1, retry.ErrPermanent},
		{codes.Internal, grpcretry.ReasonInternal, 2, retry.ErrClassLimit},
		{codes.Unknown, grpcretry.ReasonUnknown, 2, retry.ErrClassLimit},
		{codes.DeadlineExceeded, grpcretry.ReasonDeadlineExceeded, 3, retry.ErrExhausted},
	}
	for _, row := range rows {
		t.Run(row.code.String()+" is "+row.reason+", "+row.stop.Error(), func(t *testing.T) {
			srv := &scripted{steps: []step{{err: status.Error(row.code, "scripted")}}}
			i := interceptor(t, grpcretry.WithRetrier(fast(t, nil)), grpcretry.WithIdempotentMethods(checkMethod))
			client := dial(t, serve(t, srv), i)
			_, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
			if got := len(srv.seen()); got != row.calls {
				t.Errorf("server saw %d calls, want %d", got, row.calls)
			}
			if !errors.Is(err, row.stop) {
				t.Errorf("err = %v, want %v", err, row.stop)
			}
			var rerr *retry.Error
			if !errors.As(err, &rerr) || rerr.Decision.Reason != row.reason {
				t.Errorf("decision = %+v, want reason %q", rerr, row.reason)
			}
			if got := status.Code(err); got != row.code {
				t.Errorf("status.Code(err) = %v, want %v: the caller still sees the status", got, row.code)
			}
		})
	}
}

// The table alone, as a classify.Func, for calls made without the
// interceptors.
func TestClassifyIsTheTable(t *testing.T) {
	for code := codes.Canceled; code <= codes.Unauthenticated; code++ {
		d := grpcretry.Classify(status.Error(code, "x"))
		if d.Verdict == classify.NoOpinion || d.Reason == "" {
			t.Errorf("Classify(%v) = %v: every code has a row", code, d)
		}
	}
	for _, err := range []error{nil, errors.New("plain"), status.Error(codes.OK, "")} {
		if d := grpcretry.Classify(err); d.Verdict != classify.NoOpinion {
			t.Errorf("Classify(%v) = %v, want no opinion", err, d)
		}
	}
}

// A caller's classifier overrides a row: here NOT_FOUND becomes retryable
// (a record that replication has not brought yet).
func TestACallersClassifierOverridesARow(t *testing.T) {
	notFoundIsLate := func(err error) classify.Decision {
		if status.Code(err) == codes.NotFound {
			return classify.Decision{Verdict: classify.Retry, Reason: "not replicated yet"}
		}
		return classify.Decision{}
	}
	for name, opt := range map[string]func() (grpcretry.Option, *retry.Retrier){
		"through grpcretry.WithClassifier": func() (grpcretry.Option, *retry.Retrier) {
			return grpcretry.WithClassifier(notFoundIsLate), fast(t, nil)
		},
		"through the Retrier's retry.WithClassifier": func() (grpcretry.Option, *retry.Retrier) {
			return grpcretry.WithIdempotentMethods(), fast(t, nil, retry.WithClassifier(notFoundIsLate))
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := &scripted{steps: []step{{err: status.Error(codes.NotFound, "not yet")}, {}}}
			o, r := opt()
			i := interceptor(t, o, grpcretry.WithRetrier(r), grpcretry.WithIdempotentMethods(checkMethod))
			client := dial(t, serve(t, srv), i)
			if _, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
				t.Fatal(err)
			}
			if got := len(srv.seen()); got != 2 {
				t.Errorf("server saw %d calls, want 2", got)
			}
		})
	}
}
