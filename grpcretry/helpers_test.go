package grpcretry_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/observe"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

const (
	checkMethod = "/grpc.health.v1.Health/Check"
	watchMethod = "/grpc.health.v1.Health/Watch"
)

// step is what the scripted server does on one call: fail with err after
// sending msgs messages (Watch), with trailer set; or succeed.
type step struct {
	err     error
	trailer metadata.MD
	msgs    int           // Watch: messages sent before err (or before ending)
	block   bool          // wait for the call's context to end first
	hold    chan struct{} // Watch: wait for it to close after the first message
}

// seenCall is what the server saw of one call.
type seenCall struct {
	method      string
	key         string   // the idempotency-key metadata
	previous    []string // the grpc-previous-rpc-attempts metadata
	deadline    time.Time
	hasDeadline bool
}

// scripted is a health server that plays its steps in order, one per call
// (the last one repeats), and records every call.
type scripted struct {
	healthpb.UnimplementedHealthServer
	mu    sync.Mutex
	steps []step
	calls []seenCall
}

func (s *scripted) next(ctx context.Context, method string) step {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := seenCall{method: method}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if len(md[grpcretry.MetadataKey]) > 0 {
			c.key = md[grpcretry.MetadataKey][0]
		}
		c.previous = md["grpc-previous-rpc-attempts"]
	}
	c.deadline, c.hasDeadline = ctx.Deadline()
	n := len(s.calls)
	s.calls = append(s.calls, c)
	if len(s.steps) == 0 {
		return step{}
	}
	return s.steps[min(n, len(s.steps)-1)]
}

func (s *scripted) seen() []seenCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenCall(nil), s.calls...)
}

func (s *scripted) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	st := s.next(ctx, checkMethod)
	if st.block {
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	if st.trailer != nil {
		_ = grpc.SetTrailer(ctx, st.trailer)
	}
	if st.err != nil {
		return nil, st.err
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (s *scripted) Watch(_ *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	st := s.next(stream.Context(), watchMethod)
	if st.trailer != nil {
		stream.SetTrailer(st.trailer)
	}
	if st.block {
		<-stream.Context().Done()
		return status.FromContextError(stream.Context().Err()).Err()
	}
	for n := range st.msgs {
		if err := stream.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}); err != nil {
			return err
		}
		if n == 0 && st.hold != nil {
			select {
			case <-st.hold:
			case <-stream.Context().Done():
				return stream.Context().Err()
			}
		}
	}
	return st.err
}

// serve starts a real grpc-go server on a loopback port, stopped when the
// test ends, and returns its address.
func serve(t testing.TB, h healthpb.HealthServer) string {
	t.Helper()
	lis := listen(t)
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, h)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(lis)
	}()
	t.Cleanup(func() {
		s.Stop()
		<-done
	})
	return lis.Addr().String()
}

// dial connects to addr through i's dial options (and extra ones), closed
// when the test ends.
func dial(t *testing.T, addr string, i *grpcretry.Interceptor, extra ...grpc.DialOption) healthpb.HealthClient {
	t.Helper()
	opts, err := i.DialOptions()
	if err != nil {
		t.Fatal(err)
	}
	return dialWith(t, addr, append(opts, extra...)...)
}

// dialWith connects to addr with opts, closed when the test ends.
func dialWith(t testing.TB, addr string, opts ...grpc.DialOption) healthpb.HealthClient {
	t.Helper()
	cc, err := grpc.NewClient(addr, append(opts, grpc.WithTransportCredentials(insecureCreds()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return healthpb.NewHealthClient(cc)
}

// fast is a Retrier that waits at most a millisecond between attempts, and
// records every event.
func fast(t *testing.T, events *[]observe.Event, opts ...retry.Option) *retry.Retrier {
	t.Helper()
	var mu sync.Mutex
	base := []retry.Option{
		retry.WithBackoff(backoff.Constant(time.Millisecond)),
		retry.WithMaxAttempts(3),
		retry.WithObserver(observe.Func(func(_ context.Context, e observe.Event) {
			if events != nil {
				mu.Lock()
				*events = append(*events, e)
				mu.Unlock()
			}
		})),
	}
	r, err := retry.New(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// interceptor builds an Interceptor of r or fails the test.
func interceptor(t *testing.T, r *retry.Retrier, opts ...grpcretry.Option) *grpcretry.Interceptor {
	t.Helper()
	i, err := grpcretry.New(r, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func insecureCreds() credentials.TransportCredentials { return insecure.NewCredentials() }

// listen opens a loopback listener on a free port.
func listen(t testing.TB) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return lis
}

// metadataKey returns a context whose outgoing metadata carries key.
func metadataKey(key string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), grpcretry.MetadataKey, key)
}
