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
		{codes.Unavailable, classify.ReasonGRPCUnavailable, 3, retry.ErrExhausted},
		{codes.Canceled, classify.ReasonGRPCCanceled, 1, retry.ErrPermanent},
		{codes.InvalidArgument, classify.ReasonGRPCInvalidArgument, 1, retry.ErrPermanent},
		{codes.NotFound, classify.ReasonGRPCNotFound, 1, retry.ErrPermanent},
		{codes.AlreadyExists, classify.ReasonGRPCAlreadyExists, 1, retry.ErrPermanent},
		{codes.PermissionDenied, classify.ReasonGRPCPermissionDenied, 1, retry.ErrPermanent},
		{codes.Unauthenticated, classify.ReasonGRPCUnauthenticated, 1, retry.ErrPermanent},
		{codes.FailedPrecondition, classify.ReasonGRPCFailedPrecondition, 1, retry.ErrPermanent},
		{codes.OutOfRange, classify.ReasonGRPCOutOfRange, 1, retry.ErrPermanent},
		{codes.Unimplemented, classify.ReasonGRPCUnimplemented, 1, retry.ErrPermanent},
		{codes.DataLoss, classify.ReasonGRPCDataLoss, 1, retry.ErrPermanent},
		{codes.ResourceExhausted, classify.ReasonGRPCResourceExhausted, 1, retry.ErrPermanent},
		{codes.Aborted, classify.ReasonGRPCAborted, 1, retry.ErrPermanent},
		{codes.Internal, classify.ReasonGRPCInternal, 2, retry.ErrClassLimit},
		{codes.Unknown, classify.ReasonGRPCUnknown, 2, retry.ErrClassLimit},
		{codes.DeadlineExceeded, classify.ReasonGRPCDeadlineExceeded, 3, retry.ErrExhausted},
	}
	for _, row := range rows {
		t.Run(row.code.String()+" is "+row.reason+", "+row.stop.Error(), func(t *testing.T) {
			srv := &scripted{steps: []step{{err: status.Error(row.code, "scripted")}}}
			i := interceptor(t, fast(t, nil), grpcretry.WithIdempotentMethods(checkMethod))
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

// A caller's classifier, given to the Retrier, overrides a row: here
// NOT_FOUND becomes retryable (a record that replication has not brought
// yet).
func TestACallersClassifierOverridesARow(t *testing.T) {
	notFoundIsLate := func(err error) classify.Decision {
		if status.Code(err) == codes.NotFound {
			return classify.Decision{Verdict: classify.Retry, Reason: "not replicated yet"}
		}
		return classify.Decision{}
	}
	srv := &scripted{steps: []step{{err: status.Error(codes.NotFound, "not yet")}, {}}}
	i := interceptor(t, fast(t, nil, retry.WithClassifier(notFoundIsLate)), grpcretry.WithIdempotentMethods(checkMethod))
	client := dial(t, serve(t, srv), i)
	if _, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := len(srv.seen()); got != 2 {
		t.Errorf("server saw %d calls, want 2", got)
	}
}

// A code outside the table — one a server made up, or a later gRPC added —
// has UNKNOWN's row: retried once, and only if the attempt may run again. A
// call to a method that is not idempotent, which the server answered, may
// have been processed: it is sent once.
func TestACodeOutsideTheTableIsUnknownsRowBehindTheIdempotencyGate(t *testing.T) {
	const madeUp = codes.Code(42)
	rows := []struct {
		name  string
		opts  []grpcretry.Option
		calls int
		stop  error
	}{
		{"on a method that is not idempotent: sent once", nil, 1, retry.ErrNotIdempotent},
		{"on an idempotent method: retried once", []grpcretry.Option{grpcretry.WithIdempotentMethods(checkMethod)}, 2, retry.ErrClassLimit},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			srv := &scripted{steps: []step{{err: status.Error(madeUp, "scripted: a code of its own")}}}
			_, err := dial(t, serve(t, srv), interceptor(t, fast(t, nil), row.opts...)).Check(context.Background(), &healthpb.HealthCheckRequest{})
			if got := len(srv.seen()); got != row.calls {
				t.Errorf("server saw %d calls, want %d", got, row.calls)
			}
			var rerr *retry.Error
			if !errors.Is(err, row.stop) || !errors.As(err, &rerr) || rerr.Decision.Reason != classify.ReasonGRPCUnknown {
				t.Errorf("err = %v, want %v classified %q", err, row.stop, classify.ReasonGRPCUnknown)
			}
			if status.Code(err) != madeUp {
				t.Errorf("status.Code(err) = %v, want the server's %v", status.Code(err), madeUp)
			}
		})
	}
	if d := grpcretry.Classify(status.Error(madeUp, "x")); d.Reason != classify.ReasonGRPCUnknown || d.Limit != 1 {
		t.Errorf("Classify(code 42) = %v, want UNKNOWN's row", d)
	}
}
