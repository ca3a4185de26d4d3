package grpcretry_test

import (
	"context"
	"slices"
	"testing"

	"github.com/retrykit/retry/grpcretry"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// Every retried attempt carries grpc-previous-rpc-attempts (gRFC A6): how
// many attempts of the call were sent before it; the first carries none.
func TestEveryRetriedAttemptSaysHowManyWereSentBeforeIt(t *testing.T) {
	want := [][]string{nil, {"1"}, {"2"}}
	check := func(t *testing.T, srv *scripted) {
		t.Helper()
		calls := srv.seen()
		if len(calls) != len(want) {
			t.Fatalf("server saw %d calls, want %d", len(calls), len(want))
		}
		for n, c := range calls {
			if !slices.Equal(c.previous, want[n]) {
				t.Errorf("attempt %d carried grpc-previous-rpc-attempts %q, want %q", n+1, c.previous, want[n])
			}
		}
	}
	t.Run("unary", func(t *testing.T) {
		srv := &scripted{steps: []step{{err: unavailable}, {err: unavailable}, {}}}
		i := interceptor(t, fast(t, nil), grpcretry.WithIdempotentMethods(checkMethod))
		if _, err := dial(t, serve(t, srv), i).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatal(err)
		}
		check(t, srv)
	})
	t.Run("server streaming", func(t *testing.T) {
		srv := &scripted{steps: []step{{err: unavailable}, {err: unavailable}, {msgs: 1}}}
		if n, err := watch(t, srv, grpcretry.WithIdempotentMethods(watchMethod)); err != nil || n != 1 {
			t.Fatalf("received %d messages, err %v; want 1, nil", n, err)
		}
		check(t, srv)
	})
	t.Run("a second call starts again from none", func(t *testing.T) {
		srv := &scripted{steps: []step{{}}}
		client := dial(t, serve(t, srv), interceptor(t, fast(t, nil)))
		for range 2 {
			if _, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
				t.Fatal(err)
			}
		}
		for n, c := range srv.seen() {
			if c.previous != nil {
				t.Errorf("call %d carried grpc-previous-rpc-attempts %q, want none", n+1, c.previous)
			}
		}
	})
}
