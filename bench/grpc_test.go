package bench

import (
	"context"
	"net"
	"testing"

	grpcmw "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/retrykit/retry/grpcretry"
)

// The gRPC case: the unary interceptors on a call that succeeds at once.
// retry is grpcretry with the success policy (grpc-go's own retry disabled,
// as its DialOptions do); middleware is go-grpc-middleware v2's retry
// interceptor with 3 attempts and exponential backoff from 100 ms (its
// retries are off unless WithMax is set); plain has no interceptor.
var grpcImpls = []string{"retry", "middleware", "plain"}

func grpcUnary(name string) grpc.UnaryClientInterceptor {
	switch name {
	case "retry":
		return must(grpcretry.New(successRetry())).Unary
	case "middleware":
		return grpcmw.UnaryClientInterceptor(grpcmw.WithMax(attempts), grpcmw.WithBackoff(grpcmw.BackoffExponential(successBase)))
	}
	return nil
}

// okHealth answers every Check at once.
type okHealth struct {
	healthpb.UnimplementedHealthServer
}

var serving = &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}

func (okHealth) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	return serving, nil
}

// BenchmarkGRPCSuccess is a real call over a loopback connection to a
// grpc-go server in the same process: the overhead of each interceptor is
// its figure less plain's.
func BenchmarkGRPCSuccess(b *testing.B) {
	lis := must(net.Listen("tcp", "127.0.0.1:0"))
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, okHealth{})
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	req := &healthpb.HealthCheckRequest{}
	for _, name := range grpcImpls {
		opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDisableRetry()}
		if in := grpcUnary(name); in != nil {
			opts = append(opts, grpc.WithUnaryInterceptor(in))
		}
		cc := must(grpc.NewClient(lis.Addr().String(), opts...))
		client := healthpb.NewHealthClient(cc)
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := client.Check(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
		_ = cc.Close()
	}
}

// BenchmarkGRPCInterceptor isolates the interceptors from the network: the
// invoker answers at once, as a call that succeeded, so the figure is the
// interceptor's own cost; plain calls the invoker directly.
func BenchmarkGRPCInterceptor(b *testing.B) {
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	req, reply := &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{}
	const method = "/grpc.health.v1.Health/Check"
	for _, name := range grpcImpls {
		in := grpcUnary(name)
		if in == nil {
			in = func(ctx context.Context, m string, req, reply any, cc *grpc.ClientConn, inv grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				return inv(ctx, m, req, reply, cc, opts...)
			}
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := in(ctx, method, req, reply, nil, invoker); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
