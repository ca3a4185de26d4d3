package grpcretry_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/hedge"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/stream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// flaky fails its first Check with UNAVAILABLE and a 10ms pushback, and
// breaks every Watch after two messages.
type flaky struct {
	healthpb.UnimplementedHealthServer
	calls atomic.Int32
}

func (f *flaky) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if f.calls.Add(1) == 1 {
		_ = grpc.SetTrailer(ctx, metadata.Pairs("grpc-retry-pushback-ms", "10"))
		return nil, status.Error(codes.Unavailable, "warming up")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (f *flaky) Watch(_ *healthpb.HealthCheckRequest, s healthpb.Health_WatchServer) error {
	for range 2 {
		_ = s.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
	}
	return status.Error(codes.Unavailable, "restarting")
}

// startFlaky serves a flaky health service on a loopback port.
func startFlaky() (addr string, stop func()) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, &flaky{})
	go func() { _ = s.Serve(lis) }()
	return lis.Addr().String(), s.Stop
}

func ExampleNew() {
	addr, stop := startFlaky()
	defer stop()

	r, err := retry.New(retry.WithBackoff(backoff.Constant(time.Millisecond)),
		retry.WithObserver(observe.Func(func(_ context.Context, e observe.Event) {
			if e.Kind == observe.RetryScheduled {
				fmt.Printf("attempt %d failed (%s); waiting at least the server's 10ms\n", e.Attempt, e.Decision.Reason)
			}
		})))
	if err != nil {
		panic(err)
	}
	// Check only reads: declare it idempotent, so that an UNAVAILABLE from
	// the server — which may have run it — is repeated.
	i, err := grpcretry.New(r, grpcretry.WithIdempotentMethods("/grpc.health.v1.Health/Check"))
	if err != nil {
		panic(err)
	}
	opts, err := i.DialOptions()
	if err != nil {
		panic(err)
	}
	cc, err := grpc.NewClient(addr, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		panic(err)
	}
	defer cc.Close()

	resp, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{})
	fmt.Println(resp.GetStatus(), err)
	// Output:
	// attempt 1 failed (grpc unavailable); waiting at least the server's 10ms
	// SERVING <nil>
}

func ExampleInterceptor_Stream() {
	addr, stop := startFlaky()
	defer stop()

	var i grpcretry.Interceptor // the zero Interceptor: the defaults
	opts, err := i.DialOptions()
	if err != nil {
		panic(err)
	}
	cc, err := grpc.NewClient(addr, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		panic(err)
	}
	defer cc.Close()

	w, err := healthpb.NewHealthClient(cc).Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		panic(err)
	}
	for {
		if _, err = w.Recv(); err != nil {
			break
		}
	}
	var broke *stream.Error[any]
	if errors.As(err, &broke) {
		fmt.Printf("broke after %d messages, not retried: %v\n", broke.Delivered, status.Code(err))
	}
	// Output:
	// broke after 2 messages, not retried: Unavailable
}

func ExampleClassify() {
	for _, err := range []error{
		status.Error(codes.Unavailable, "down"),
		status.Error(codes.ResourceExhausted, "quota"),
		status.Error(codes.Internal, "oops"),
		status.Error(codes.InvalidArgument, "bad"),
	} {
		fmt.Println(grpcretry.Classify(err))
	}
	// Output:
	// retry (grpc unavailable)
	// stop (grpc resource exhausted)
	// retry (grpc internal, at most 1 per call)
	// stop (grpc invalid argument)
}

// slowFirst keeps a first attempt waiting until the call gives up on it,
// and answers the others at once, saying what they said of the attempts
// before them.
type slowFirst struct {
	healthpb.UnimplementedHealthServer
}

func (slowFirst) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	before := md["grpc-previous-rpc-attempts"]
	if len(before) == 0 {
		<-ctx.Done() // a slow backend: the hedge answers first
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	fmt.Printf("the server: grpc-previous-rpc-attempts %v\n", before)
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

// An idempotent call still without an answer after 20ms is sent again
// alongside; the first answer wins and the slow attempt is cancelled.
func ExampleWithHedging() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, slowFirst{})
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	r, err := retry.New(retry.WithObserver(observe.Func(func(_ context.Context, e observe.Event) {
		if e.Kind == observe.HedgeStarted {
			fmt.Printf("attempt %d starts alongside, after %v\n", e.Attempt, e.Delay)
		}
	})))
	if err != nil {
		panic(err)
	}
	i, err := grpcretry.New(r, grpcretry.WithHedging(hedge.Fixed(20*time.Millisecond), 2),
		grpcretry.WithIdempotentMethods("/grpc.health.v1.Health/Check"))
	if err != nil {
		panic(err)
	}
	opts, err := i.DialOptions()
	if err != nil {
		panic(err)
	}
	cc, err := grpc.NewClient(lis.Addr().String(), append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		panic(err)
	}
	defer cc.Close()

	resp, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{})
	fmt.Println(resp.GetStatus(), err)
	// Output:
	// attempt 2 starts alongside, after 20ms
	// the server: grpc-previous-rpc-attempts [1]
	// SERVING <nil>
}

// A call the Retrier's limiter refuses is not sent, and says so in its
// status: RESOURCE_EXHAUSTED, the code of a limit the client itself hit.
func ExampleNew_refusedByTheLimiter() {
	addr, stop := startFlaky()
	defer stop()

	throttler, err := limit.NewThrottler(limit.ThrottlerConfig{Rand: func() uint64 { return 0 }}) // refuses whenever it may
	if err != nil {
		fmt.Println(err)
		return
	}
	r, _ := retry.New(retry.WithLimiter(throttler), retry.WithMaxAttempts(1))
	i, err := grpcretry.New(r)
	if err != nil {
		fmt.Println(err)
		return
	}
	opts, _ := i.DialOptions()
	cc, err := grpc.NewClient(addr, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = cc.Close() }()
	client := healthpb.NewHealthClient(cc)
	for range 2 {
		_, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
		fmt.Println(status.Code(err), errors.Is(err, retry.ErrLimited))
	}
	// Output:
	// Unavailable false
	// ResourceExhausted true
}
