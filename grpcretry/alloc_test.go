//go:build !race

// The race detector makes sync.Pool drop what it is given, at random: the
// figures below hold without it.

package grpcretry_test

import (
	"context"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/hedge"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// okHealth answers every Check at once, and keeps nothing.
type okHealth struct {
	healthpb.UnimplementedHealthServer
}

var serving = &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}

func (okHealth) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	return serving, nil
}

// clients returns a client without interceptors and clients through the
// Interceptors named, to the same loopback server.
func clients(t testing.TB) map[string]healthpb.HealthClient {
	t.Helper()
	addr := serve(t, okHealth{})
	r, err := retry.New()
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := grpcretry.New(r)
	hedged, _ := grpcretry.New(r, grpcretry.WithHedging(hedge.Fixed(time.Second), 2), grpcretry.WithIdempotentMethods(checkMethod))
	out := map[string]healthpb.HealthClient{"bare": dialWith(t, addr, grpc.WithDisableRetry())}
	for name, i := range map[string]*grpcretry.Interceptor{"retry": plain, "retry, hedged": hedged} {
		opts, err := i.DialOptions()
		if err != nil {
			t.Fatal(err)
		}
		out[name] = dialWith(t, addr, opts...)
	}
	return out
}

// A unary call that succeeds at once costs at most one allocation more than
// the bare call: grpc-go's copy of the trailer that tells whether an
// attempt reached the server. The call key is set only when a stage of the
// Retrier reads it, and the per-call state is pooled.
func TestASuccessfulCallAllocatesAtMostOneMoreThanABareCall(t *testing.T) {
	cs := clients(t)
	ctx, req := context.Background(), &healthpb.HealthCheckRequest{}
	measure := func(c healthpb.HealthClient) float64 {
		for range 100 { // a warm connection and warm pools
			if _, err := c.Check(ctx, req); err != nil {
				t.Fatal(err)
			}
		}
		return testing.AllocsPerRun(2000, func() { _, _ = c.Check(ctx, req) })
	}
	bare, wrapped := measure(cs["bare"]), measure(cs["retry"])
	t.Logf("allocations per call: bare %v, through the interceptor %v", bare, wrapped)
	if wrapped > bare+1 {
		t.Errorf("a call through the interceptor makes %v allocations, the bare call %v: more than one more", wrapped, bare)
	}
}

// BenchmarkGRPCSuccess is a real call over a loopback connection to a
// grpc-go server in the same process: the interceptor's overhead is its
// figure less bare's.
func BenchmarkGRPCSuccess(b *testing.B) {
	cs := clients(b)
	ctx, req := context.Background(), &healthpb.HealthCheckRequest{}
	for _, name := range []string{"bare", "retry", "retry, hedged"} {
		c := cs[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Check(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The interceptor alone, around an invoker that succeeds at once, allocates
// nothing: the one allocation above is grpc-go's, filling the trailer.
func TestTheInterceptorAloneAllocatesNothingOnASuccess(t *testing.T) {
	r, err := retry.New()
	if err != nil {
		t.Fatal(err)
	}
	i := interceptor(t, r)
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	ctx, req, reply := context.Background(), &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{}
	if n := testing.AllocsPerRun(1000, func() { _ = i.Unary(ctx, checkMethod, req, reply, nil, invoker) }); n != 0 {
		t.Errorf("Unary makes %v allocations, want 0", n)
	}
}
