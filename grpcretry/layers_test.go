package grpcretry_test

import (
	"context"
	"testing"

	"github.com/retrykit/retry/grpcretry"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// grpc-go's own retry policy (gRFC A6), 3 attempts on UNAVAILABLE.
const serviceConfig = `{"methodConfig": [{
	"name": [{"service": "grpc.health.v1.Health"}],
	"retryPolicy": {
		"maxAttempts": 3, "initialBackoff": "0.001s", "maxBackoff": "0.001s",
		"backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]
	}
}]}`

// Two retry layers multiply: 3 attempts of the interceptor, each of which
// grpc-go makes 3 times, are 9 calls. DialOptions disables grpc-go's so that
// one layer retries.
func TestTwoRetryLayersMultiplyAndDialOptionsLeavesOne(t *testing.T) {
	call := func(t *testing.T, disable bool) int {
		srv := &scripted{steps: []step{{err: unavailable}}}
		i := interceptor(t, fast(t, nil), grpcretry.WithIdempotentMethods(checkMethod))
		extra := []grpc.DialOption{grpc.WithDefaultServiceConfig(serviceConfig)}
		addr := serve(t, srv)
		var client healthpb.HealthClient
		if disable {
			client = dial(t, addr, i, extra...)
		} else {
			client = dialWith(t, addr, append(extra, grpc.WithUnaryInterceptor(i.Unary))...)
		}
		_, _ = client.Check(context.Background(), &healthpb.HealthCheckRequest{})
		return len(srv.seen())
	}
	if got := call(t, false); got != 9 {
		t.Errorf("with grpc-go's retry on: %d calls, want 3×3 = 9", got)
	}
	if got := call(t, true); got != 3 {
		t.Errorf("with DialOptions: %d calls, want 3", got)
	}
}
