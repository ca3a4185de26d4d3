package grpcretry_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/observe"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// A breaker per (target, method), the Retrier's: one method's failures
// open its own breaker, which then refuses calls without sending them; the
// other method of the same target is not affected.
func TestABreakerPerTargetAndMethod(t *testing.T) {
	srv := &scripted{steps: []step{{err: unavailable}, {err: unavailable}, {err: unavailable}, {}}}
	b, err := breaker.New(breaker.Config{ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 1 }, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var events []observe.Event
	i := interceptor(t, fast(t, &events, retry.WithBreakers(b)), grpcretry.WithIdempotentMethods(checkMethod, watchMethod))
	addr := serve(t, srv)
	client := dial(t, addr, i)
	if _, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{}); !errors.Is(err, retry.ErrExhausted) {
		t.Fatalf("first call: %v, want ErrExhausted", err)
	}
	_, err = client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if !errors.Is(err, retry.ErrBreakerOpen) || !errors.Is(err, breaker.ErrOpen) || len(srv.seen()) != 3 {
		t.Errorf("second call: %v after %d server calls, want ErrBreakerOpen after 3", err, len(srv.seen()))
	}
	if status.Code(err) != codes.Unavailable || !strings.Contains(status.Convert(err).Message(), "circuit breaker") {
		t.Errorf("second call's status: %v, want UNAVAILABLE saying the breaker refused it", status.Convert(err))
	}
	want := breaker.Key{Target: addr, Operation: checkMethod}
	var changed []breaker.Key
	for _, e := range events {
		if e.Kind == observe.BreakerChanged {
			changed = append(changed, e.Detail.(breaker.Transition).Key)
		}
	}
	if len(changed) != 1 || changed[0] != want || b.State(want) != breaker.StateOpen {
		t.Errorf("state changes of %v, want one of %v", changed, want)
	}
	w, err := client.Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err == nil {
		_, err = w.Recv()
	}
	if !errors.Is(err, io.EOF) {
		t.Errorf("Watch on the same target: %v, want the server's empty stream: its breaker is its own", err)
	}
}

// A server wait too long to sleep starts the (target, method)'s cooldown,
// the Retrier's: the next call fails locally, sends nothing, and says how
// long is left.
func TestAnUnavailableWithALongPushbackCoolsTheMethodDown(t *testing.T) {
	srv := &scripted{steps: []step{{err: unavailable, trailer: pushbackMS("60000")}, {}}}
	cd, err := breaker.NewCooldowns(breaker.CooldownConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var events []observe.Event
	i := interceptor(t, fast(t, &events, retry.WithCooldowns(cd)), grpcretry.WithIdempotentMethods(checkMethod))
	addr := serve(t, srv)
	client := dial(t, addr, i)
	_, err = client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if !errors.Is(err, retry.ErrWaitTooLong) {
		t.Fatalf("first call: %v, want ErrWaitTooLong", err)
	}
	_, err = client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	var rerr *retry.Error
	if !errors.Is(err, breaker.ErrCooldown) || !errors.As(err, &rerr) || rerr.RetryAfter < 59*time.Second {
		t.Errorf("second call: %v, want a local cooldown with about a minute left", err)
	}
	if status.Code(err) != codes.Unavailable {
		t.Errorf("second call's status: %v, want UNAVAILABLE, held back by the cooldown", status.Code(err))
	}
	var cooled []breaker.Key
	for _, e := range events {
		if e.Kind == observe.CooldownStarted {
			cooled = append(cooled, e.Detail.(breaker.Key))
		}
	}
	want := breaker.Key{Target: addr, Operation: checkMethod}
	if got := len(srv.seen()); got != 1 || len(cooled) != 1 || cooled[0] != want {
		t.Errorf("server saw %d calls, cooldowns of %v; want 1 call and one cooldown of %v", got, cooled, want)
	}
}

// The retry budget plugs in through the Retrier, as for HTTP.
func TestTheRetryBudgetIsTheRetriers(t *testing.T) {
	b, err := budget.NewTokenBucket(budget.TokenBucketConfig{Capacity: 2, Cost: 1, Threshold: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := &scripted{steps: []step{{err: unavailable}}}
	i := interceptor(t, fast(t, nil, retry.WithBudget(b)), grpcretry.WithIdempotentMethods(checkMethod))
	_, err = dial(t, serve(t, srv), i).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if !errors.Is(err, retry.ErrBudget) {
		t.Errorf("err = %v, want ErrBudget", err)
	}
	if got := len(srv.seen()); got != 1 {
		t.Errorf("server saw %d calls, want 1", got)
	}
}
