package grpcretry_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/internal/faultproxy"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// Outages between a client and a real grpc-go server, made by a fault
// proxy, while callers make keyed calls with 300ms deadlines through the
// interceptors. Each checks: no call returns later than its deadline plus
// 100ms; every acknowledged call was processed by the server (an answer the
// client got is never invented, nor lost with a retry); and calls succeed
// again soon after the outage: at once after a hung server, and within
// grpc-go's reconnect backoff (1s, then 1.6 times more each failed attempt,
// ±20%) after the connection broke.

const (
	grpcDeadline = 300 * time.Millisecond
	grpcMargin   = 100 * time.Millisecond
)

// ledger is a health server that records each call's service name (the
// test's key) and answers SERVING.
type ledger struct {
	healthpb.UnimplementedHealthServer
	mu   sync.Mutex
	seen map[string]int
}

func (l *ledger) Check(_ context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	l.mu.Lock()
	l.seen[req.Service]++
	l.mu.Unlock()
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (l *ledger) times(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[key]
}

func TestOutagesEndEveryCallByItsDeadlineAndRecover(t *testing.T) {
	outages := []struct {
		name     string
		apply    func(*faultproxy.Proxy)
		recovery time.Duration // what the package documentation and grpc-go's allow
	}{
		{"a hung server", func(p *faultproxy.Proxy) { p.Set(faultproxy.Faults{BlackHole: true}) }, grpcDeadline},
		{"one reply cut by a reset", func(p *faultproxy.Proxy) {
			p.Set(faultproxy.Faults{Reset: true, ResetAfter: 20})
			for deadline := time.Now().Add(time.Second); p.Resets() == 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			p.Set(faultproxy.Faults{})
		}, grpcDeadline},
		{"resets in the middle of every reply", func(p *faultproxy.Proxy) { p.Set(faultproxy.Faults{Reset: true, ResetAfter: 20}) }, 2 * time.Second},
		{"a server gone", func(p *faultproxy.Proxy) { p.Set(faultproxy.Faults{Refuse: true}); p.ResetAll() }, 2 * time.Second},
	}
	for _, o := range outages {
		t.Run(o.name, func(t *testing.T) {
			srv := &ledger{seen: map[string]int{}}
			proxy := faultproxy.Start(t, serve(t, srv), faultproxy.Config{})
			r, err := retry.New(retry.WithMaxAttempts(100),
				retry.WithBackoff(backoff.Exponential{Base: time.Millisecond, MaxDelay: 20 * time.Millisecond}))
			if err != nil {
				t.Fatal(err)
			}
			client := dial(t, proxy.Addr(), interceptor(t, r))
			run := grpcRun{client: client, acked: map[string]bool{}}
			run.during(func() { o.apply(proxy) }, func() { proxy.Set(faultproxy.Faults{}) }, o.recovery+500*time.Millisecond)

			over, worst := run.log.Overshoot()
			if over > grpcMargin {
				t.Errorf("a call returned %v past its deadline: %v", over, worst.Err)
			}
			recovered, ok := run.log.Recovery()
			switch {
			case !ok:
				t.Errorf("no call succeeded after the outage")
			case recovered > o.recovery:
				t.Errorf("calls succeeded again %v after the outage, want within %v", recovered, o.recovery)
			}
			twice, abandoned := 0, 0
			for key := range run.acked {
				switch n := srv.times(key); {
				case n == 0:
					t.Errorf("call %s was acknowledged, but the server never processed it", key)
				case n > 1:
					twice++ // a reply lost in a reset, and the keyed call retried
				}
			}
			for _, c := range run.failed {
				if srv.times(c) > 0 {
					abandoned++ // processed, but the caller had given up: its key lets a retry replay it
				}
			}
			t.Logf("%d calls: %d acknowledged (%d processed twice: a reply was lost, the keyed call retried); %d failed (%d processed all the same); worst overshoot %v (deadlines noticed up to %v late); recovered %v after the outage",
				len(run.log.Calls()), len(run.acked), twice, len(run.failed), abandoned, over, run.log.Lateness(), recovered)
		})
	}
}

// grpcRun is 4 callers, each making keyed Check calls one after another.
type grpcRun struct {
	client healthpb.HealthClient
	log    faultproxy.Log
	mu     sync.Mutex
	acked  map[string]bool
	failed []string
}

// during runs the callers for 300ms, through the outage (start; 600ms;
// end), and for after after it.
func (g *grpcRun) during(start, end func(), after time.Duration) {
	g.log.Through(start, end, after, func(key string) error {
		err := g.log.Do(context.Background(), grpcDeadline, func(ctx context.Context) error {
			ctx, err := retry.WithIdempotencyKey(ctx, key)
			if err == nil {
				_, err = g.client.Check(ctx, &healthpb.HealthCheckRequest{Service: key})
			}
			return err
		}).Err
		g.mu.Lock()
		defer g.mu.Unlock()
		if err == nil {
			g.acked[key] = true
		} else {
			g.failed = append(g.failed, key)
		}
		return err
	})
}
