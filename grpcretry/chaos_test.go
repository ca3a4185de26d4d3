package grpcretry_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/chaos"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// chaosClient calls a real health server through i, under s's faults, and
// returns the server, to count what it processed.
func chaosClient(t *testing.T, i *grpcretry.Interceptor, s *chaos.Scenario) (healthpb.HealthClient, *scripted) {
	t.Helper()
	srv := &scripted{}
	return dial(t, serve(t, srv), i, grpc.WithChainUnaryInterceptor(grpcretry.Chaos(s))), srv
}

func oneFault(t *testing.T, f chaos.Fault) *chaos.Scenario {
	t.Helper()
	s, err := chaos.New(chaos.Config{Rules: []chaos.Rule{{Fault: f}}})
	require.NoError(t, err)
	return s
}

func TestChaosFaultsEndCallsAsGRPCWouldForReal(t *testing.T) {
	tests := []struct {
		name       string
		fault      chaos.Fault
		idempotent bool
		code       codes.Code
		attempts   int // the attempts the Interceptor made
		processed  int // the calls the server processed
	}{
		{"a refused connection is retried: nothing was sent", chaos.Refused(), false, codes.Unavailable, 3, 0},
		{"a reset before sending is retried: nothing was sent", chaos.ResetBeforeSend(), false, codes.Unavailable, 3, 0},
		{"a reset after sending a call that is not idempotent is not retried", chaos.ResetAfterSend(), false, codes.Unavailable, 1, 1},
		{"a reset after sending an idempotent call is retried", chaos.ResetAfterSend(), true, codes.Unavailable, 3, 3},
		{"a truncated answer is INTERNAL, retried once", chaos.Truncate(0), true, codes.Internal, 2, 2},
		{"a 503 is UNAVAILABLE from the server: retried when idempotent", chaos.Throttle(503, 0), true, codes.Unavailable, 3, 0},
		{"a 503 is UNAVAILABLE from the server: not retried otherwise", chaos.Throttle(503, 0), false, codes.Unavailable, 1, 0},
		{"a 429 without pushback is RESOURCE_EXHAUSTED, not retried", chaos.Throttle(429, 0), true, codes.ResourceExhausted, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []grpcretry.Option
			if tt.idempotent {
				opts = append(opts, grpcretry.WithIdempotentMethods(checkMethod))
			}
			var events []observe.Event
			s := oneFault(t, tt.fault)
			client, srv := chaosClient(t, interceptor(t, fast(t, &events), opts...), s)
			_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{})
			assert.Equal(t, tt.code, status.Code(err), "%v", err)
			var attempts int
			for _, e := range events {
				if e.Kind == observe.AttemptDone {
					attempts++
				}
			}
			assert.Equal(t, tt.attempts, attempts)
			assert.Len(t, srv.seen(), tt.processed, "calls the server processed")
			assert.Equal(t, int64(tt.processed), s.Stats().Processed)
		})
	}
}

// TestAChaosThrottleIsARealServersThrottle runs the same calls against a
// real server that throttles with a status and a pushback trailer, and
// against a healthy one under Throttle: the Interceptor does the same.
func TestAChaosThrottleIsARealServersThrottle(t *testing.T) {
	for _, tt := range []struct {
		name       string
		code       codes.Code
		pushback   time.Duration
		idempotent bool
	}{
		{"429 with pushback", codes.ResourceExhausted, 30 * time.Millisecond, false},
		{"429 with pushback, idempotent", codes.ResourceExhausted, 30 * time.Millisecond, true},
		{"503 with pushback", codes.Unavailable, 30 * time.Millisecond, false},
		{"503 with pushback, idempotent", codes.Unavailable, 30 * time.Millisecond, true},
		{"503", codes.Unavailable, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var opts []grpcretry.Option
			if tt.idempotent {
				opts = append(opts, grpcretry.WithIdempotentMethods(checkMethod))
			}
			run := func(client healthpb.HealthClient, events *[]observe.Event) (error, []time.Duration) {
				_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{})
				var delays []time.Duration
				for _, e := range *events {
					if e.Kind == observe.RetryScheduled {
						delays = append(delays, e.Delay)
					}
				}
				return err, delays
			}
			answer := step{err: status.Error(tt.code, "throttled")}
			if tt.pushback > 0 {
				answer.trailer = metadata.Pairs("grpc-retry-pushback-ms", strconv.FormatInt(tt.pushback.Milliseconds(), 10))
			}
			var realEvents, events []observe.Event
			real := &scripted{steps: []step{answer}}
			realErr, realDelays := run(dial(t, serve(t, real), interceptor(t, fast(t, &realEvents), opts...)), &realEvents)

			httpCode := map[codes.Code]int{codes.ResourceExhausted: 429, codes.Unavailable: 503}[tt.code]
			s := oneFault(t, chaos.Throttle(httpCode, tt.pushback))
			client, _ := chaosClient(t, interceptor(t, fast(t, &events), opts...), s)
			err, delays := run(client, &events)

			assert.Equal(t, status.Code(realErr), status.Code(err))
			assert.Equal(t, len(real.seen()), int(s.Stats().Calls), "the same attempts")
			assert.Equal(t, len(realDelays), len(delays))
			for i := range delays {
				assert.Equal(t, realDelays[i] >= 30*time.Millisecond, delays[i] >= 30*time.Millisecond, "the pushback, waited or not")
			}
		})
	}
}

func TestAChaosValueAnswersTheCall(t *testing.T) {
	want := &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_NOT_SERVING}
	s := oneFault(t, chaos.Value(want))
	client, srv := chaosClient(t, interceptor(t, fast(t, nil)), s)
	got, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	assert.Equal(t, want.Status, got.Status)
	assert.Empty(t, srv.seen())

	wrong := oneFault(t, chaos.Value(42))
	client, _ = chaosClient(t, interceptor(t, fast(t, nil)), wrong)
	_, err = client.Check(t.Context(), &healthpb.HealthCheckRequest{})
	assert.ErrorIs(t, err, retry.ErrInvalid)
}

func TestAChaosTimeoutEndsWithTheCallersDeadline(t *testing.T) {
	s := oneFault(t, chaos.Timeout(time.Hour))
	client, srv := chaosClient(t, interceptor(t, fast(t, nil), grpcretry.WithIdempotentMethods(checkMethod)), s)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Len(t, srv.seen(), 1, "the server processed the call it never answered")
}

func TestASwitchedOffChaosInterceptorOnlyInvokes(t *testing.T) {
	s := oneFault(t, chaos.Refused())
	s.Enable(false)
	client, srv := chaosClient(t, interceptor(t, fast(t, nil)), s)
	_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	assert.Len(t, srv.seen(), 1)
	assert.Zero(t, s.Stats().Calls)

	var none *chaos.Scenario
	called := 0
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		called++
		return nil
	}
	assert.NoError(t, grpcretry.Chaos(none)(t.Context(), checkMethod, nil, nil, nil, invoker))
	assert.Equal(t, 1, called)
}

// Two resets before anything was sent, then the real server: the
// Interceptor retries through them, and the server processes one call.
func ExampleChaos() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer()) // SERVING
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	s, err := chaos.New(chaos.Config{Rules: []chaos.Rule{
		{Script: []chaos.Fault{chaos.ResetBeforeSend(), chaos.Refused()}},
	}})
	if err != nil {
		panic(err)
	}
	r, err := retry.New(retry.WithBackoff(backoff.Constant(time.Millisecond)))
	if err != nil {
		panic(err)
	}
	i, err := grpcretry.New(r)
	if err != nil {
		panic(err)
	}
	opts, err := i.DialOptions()
	if err != nil {
		panic(err)
	}
	opts = append(opts, grpc.WithChainUnaryInterceptor(grpcretry.Chaos(s)), // nearest the network
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	cc, err := grpc.NewClient(lis.Addr().String(), opts...)
	if err != nil {
		panic(err)
	}
	defer cc.Close()

	resp, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{})
	fmt.Println(resp.GetStatus(), err)
	fmt.Printf("%+v\n", s.Stats())
	// Output:
	// SERVING <nil>
	// {Calls:3 Faults:2 Processed:1 Lost:0}
}
