package grpcretry_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/grpcretry"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// A breaker per (target, method): one method's failures open its own
// breaker, which then refuses calls without sending them; the other method
// of the same target is not affected.
func TestABreakerPerTargetAndMethod(t *testing.T) {
	srv := &scripted{steps: []step{{err: unavailable}, {err: unavailable}, {err: unavailable}, {}}}
	var names []string
	var mu sync.Mutex
	settings := func(key breaker.HostModel) breaker.Settings {
		return breaker.Settings{
			ReadyToTrip:   func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 1 },
			Timeout:       time.Hour,
			OnStateChange: func(name string, _, _ breaker.State) { mu.Lock(); names = append(names, name); mu.Unlock() },
		}
	}
	i := interceptor(t, grpcretry.WithRetrier(fast(t, nil)), grpcretry.WithIdempotentMethods(checkMethod, watchMethod),
		grpcretry.WithBreakers(settings))
	addr := serve(t, srv)
	client := dial(t, addr, i)
	if _, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{}); !errors.Is(err, retry.ErrExhausted) {
		t.Fatalf("first call: %v, want ErrExhausted", err)
	}
	_, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if !errors.Is(err, breaker.ErrOpen) || len(srv.seen()) != 3 {
		t.Errorf("second call: %v after %d server calls, want ErrOpen after 3", err, len(srv.seen()))
	}
	if want := addr + "/" + checkMethod; len(names) != 1 || names[0] != want {
		t.Errorf("state changes of %v, want one of %q", names, want)
	}
	w, err := client.Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err == nil {
		_, err = w.Recv()
	}
	if !errors.Is(err, io.EOF) {
		t.Errorf("Watch on the same target: %v, want the server's empty stream: its breaker is its own", err)
	}
}

// A server wait too long to sleep starts the (target, method)'s cooldown:
// the next call fails locally, sends nothing, and says how long is left.
func TestAnUnavailableWithALongPushbackCoolsTheMethodDown(t *testing.T) {
	srv := &scripted{steps: []step{{err: unavailable, trailer: pushbackMS("60000")}, {}}}
	var cooled []string
	cd, err := breaker.NewCooldowns[breaker.HostModel](breaker.CooldownSettings{
		OnCooldown: func(key string, _ time.Time, _ error) { cooled = append(cooled, key) },
	})
	if err != nil {
		t.Fatal(err)
	}
	i := interceptor(t, grpcretry.WithRetrier(fast(t, nil)), grpcretry.WithIdempotentMethods(checkMethod), grpcretry.WithCooldowns(cd))
	client := dial(t, serve(t, srv), i)
	_, err = client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if !errors.Is(err, retry.ErrWaitTooLong) {
		t.Fatalf("first call: %v, want ErrWaitTooLong", err)
	}
	_, err = client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	var rerr *retry.Error
	if !errors.Is(err, breaker.ErrCooldown) || !errors.As(err, &rerr) || rerr.RetryAfter < 59*time.Second {
		t.Errorf("second call: %v, want a local cooldown with about a minute left", err)
	}
	if got := len(srv.seen()); got != 1 || len(cooled) != 1 {
		t.Errorf("server saw %d calls, %d cooldowns; want 1 and 1", got, len(cooled))
	}
}

// The retry budget plugs in through the Retrier, as for HTTP.
func TestTheRetryBudgetIsTheRetriers(t *testing.T) {
	b, err := budget.NewTokenBucket(budget.TokenBucketConfig{Capacity: 2, Cost: 1, Threshold: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := &scripted{steps: []step{{err: unavailable}}}
	i := interceptor(t, grpcretry.WithRetrier(fast(t, nil, retry.WithBudget(b))), grpcretry.WithIdempotentMethods(checkMethod))
	_, err = dial(t, serve(t, srv), i).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if !errors.Is(err, retry.ErrBudget) {
		t.Errorf("err = %v, want ErrBudget", err)
	}
	if got := len(srv.seen()); got != 1 {
		t.Errorf("server saw %d calls, want 1", got)
	}
}
