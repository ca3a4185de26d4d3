package grpcretry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/observe"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// Every attempt runs under the call's deadline: the server sees it.
func TestEveryAttemptCarriesTheCallersDeadline(t *testing.T) {
	srv := &scripted{steps: []step{{err: unavailable}, {err: unavailable}, {}}}
	i := interceptor(t, fast(t, nil), grpcretry.WithIdempotentMethods(checkMethod))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want, _ := ctx.Deadline()
	if _, err := dial(t, serve(t, srv), i).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	for n, c := range srv.seen() {
		// The server rebuilds the deadline from the grpc-timeout header, on
		// its clock, a little after the client's.
		if diff := c.deadline.Sub(want).Abs(); !c.hasDeadline || diff > time.Second {
			t.Errorf("attempt %d: server saw deadline %v (set: %v), want about %v", n+1, c.deadline, c.hasDeadline, want)
		}
	}
}

// With an attempt timeout, each attempt carries the shorter deadline.
func TestAnAttemptTimeoutIsTheDeadlineTheServerSees(t *testing.T) {
	srv := &scripted{steps: []step{{err: unavailable}, {}}}
	r := fast(t, nil, retry.WithAttemptTimeout(5*time.Second))
	i := interceptor(t, r, grpcretry.WithIdempotentMethods(checkMethod))
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if _, err := dial(t, serve(t, srv), i).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	for n, c := range srv.seen() {
		if left := time.Until(c.deadline); !c.hasDeadline || left > 5*time.Second {
			t.Errorf("attempt %d: server saw %v left, want at most the attempt timeout", n+1, left)
		}
	}
}

// An attempt that timed out may still be running on the server: retried
// for an idempotent method, not for another.
func TestAnAttemptThatTimedOutIsRetriedOnlyWhenIdempotent(t *testing.T) {
	for _, idempotent := range []bool{true, false} {
		name := map[bool]string{true: "idempotent: retried", false: "not idempotent: ErrNotIdempotent"}[idempotent]
		t.Run(name, func(t *testing.T) {
			srv := &scripted{steps: []step{{block: true}, {}}}
			var opts []grpcretry.Option
			if idempotent {
				opts = append(opts, grpcretry.WithIdempotentMethods(checkMethod))
			}
			r := fast(t, nil, retry.WithAttemptTimeout(10*time.Millisecond))
			_, err := dial(t, serve(t, srv), interceptor(t, r, opts...)).Check(context.Background(), &healthpb.HealthCheckRequest{})
			calls := len(srv.seen())
			switch {
			case idempotent && (err != nil || calls != 2):
				t.Errorf("err = %v after %d calls, want success after 2", err, calls)
			case !idempotent && (!errors.Is(err, retry.ErrNotIdempotent) || calls != 1):
				t.Errorf("err = %v after %d calls, want ErrNotIdempotent after 1", err, calls)
			}
		})
	}
}

// Once the caller's own deadline is gone, nothing is retried, idempotent or
// not: the error is the context's.
func TestNothingIsRetriedOnceTheCallersDeadlineIsGone(t *testing.T) {
	srv := &scripted{steps: []step{{block: true}, {}}}
	i := interceptor(t, fast(t, nil), grpcretry.WithIdempotentMethods(checkMethod))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := dial(t, serve(t, srv), i).Check(ctx, &healthpb.HealthCheckRequest{})
	if !errors.Is(err, context.DeadlineExceeded) || status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("err = %v, want the caller's deadline", err)
	}
	if got := len(srv.seen()); got != 1 {
		t.Errorf("server saw %d calls, want 1", got)
	}
}

// A call whose context ended — before it began, or while it waited to
// retry — has the context's status, as grpc-go reports it, and still
// unwraps to the loop's error with the last attempt's.
func TestACallWhoseContextEndedHasTheContextsStatus(t *testing.T) {
	t.Run("cancelled before the first attempt", func(t *testing.T) {
		srv := &scripted{}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := dial(t, serve(t, srv), new(grpcretry.Interceptor)).Check(ctx, &healthpb.HealthCheckRequest{})
		var ended *grpcretry.EndedError
		if status.Code(err) != codes.Canceled || !errors.As(err, &ended) || len(srv.seen()) != 0 {
			t.Errorf("err = %v (code %v) after %d calls, want CANCELLED before any", err, status.Code(err), len(srv.seen()))
		}
	})
	t.Run("cancelled while waiting to retry", func(t *testing.T) {
		srv := &scripted{steps: []step{{err: unavailable}}}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := fast(t, nil, retry.WithObserver(observe.Func(func(_ context.Context, e observe.Event) {
			if e.Kind == observe.RetryScheduled {
				cancel() // the caller gives up during the wait
			}
		})))
		i := interceptor(t, r, grpcretry.WithIdempotentMethods(checkMethod))
		_, err := dial(t, serve(t, srv), i).Check(ctx, &healthpb.HealthCheckRequest{})
		var rerr *retry.Error
		if status.Code(err) != codes.Canceled || !errors.Is(err, context.Canceled) || !errors.As(err, &rerr) {
			t.Fatalf("err = %v (code %v), want CANCELLED unwrapping to a *retry.Error", err, status.Code(err))
		}
		if status.Code(rerr.Last) != codes.Unavailable || rerr.Attempts != 1 {
			t.Errorf("last = %v after %d attempts, want the UNAVAILABLE of attempt 1", rerr.Last, rerr.Attempts)
		}
	})
}
