package grpcretry_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/stream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// watch opens a Watch through the interceptor and reads it to its end:
// the messages received, and the error that ended it (nil for io.EOF).
func watch(t *testing.T, srv *scripted, opts ...grpcretry.Option) (int, error) {
	t.Helper()
	i := interceptor(t, fast(t, nil), opts...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := dial(t, serve(t, srv), i).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		if _, err := w.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		n++
	}
}

func TestAServerStreamIsRetriedUntilItsFirstMessage(t *testing.T) {
	srv := &scripted{steps: []step{{err: unavailable}, {msgs: 3}}}
	n, err := watch(t, srv, grpcretry.WithIdempotentMethods(watchMethod))
	if err != nil || n != 3 {
		t.Fatalf("received %d messages, err %v; want 3, nil", n, err)
	}
	if got := len(srv.seen()); got != 2 {
		t.Errorf("server saw %d calls, want 2", got)
	}
}

func TestAServerStreamThatBreaksAfterItsFirstMessageReturnsThePartialOutput(t *testing.T) {
	srv := &scripted{steps: []step{{msgs: 2, err: unavailable}, {msgs: 3}}}
	n, err := watch(t, srv, grpcretry.WithIdempotentMethods(watchMethod))
	var serr *stream.Error[any]
	if !errors.As(err, &serr) || serr.Delivered != 2 || len(serr.Partial) != 2 {
		t.Fatalf("err = %v, want a *stream.Error[any] with the 2 messages delivered", err)
	}
	if _, ok := serr.Partial[0].(*healthpb.HealthCheckResponse); !ok || n != 2 {
		t.Errorf("partial[0] is %T after %d messages", serr.Partial[0], n)
	}
	if status.Code(err) != codes.Unavailable {
		t.Errorf("status.Code(err) = %v", status.Code(err))
	}
	if got := len(srv.seen()); got != 1 {
		t.Errorf("server saw %d calls, want 1: never retried after a message", got)
	}
}

func TestAServerStreamFollowsTheTableAndTheGateBeforeItsFirstMessage(t *testing.T) {
	t.Run("an empty stream is a success", func(t *testing.T) {
		srv := &scripted{steps: []step{{}}}
		if n, err := watch(t, srv); err != nil || n != 0 {
			t.Errorf("received %d, err %v", n, err)
		}
	})
	t.Run("a final code is not retried", func(t *testing.T) {
		srv := &scripted{steps: []step{{err: status.Error(codes.NotFound, "no such service")}}}
		_, err := watch(t, srv, grpcretry.WithIdempotentMethods(watchMethod))
		if !errors.Is(err, retry.ErrPermanent) || len(srv.seen()) != 1 {
			t.Errorf("err = %v after %d calls", err, len(srv.seen()))
		}
	})
	t.Run("a stream that is not idempotent is not repeated once sent", func(t *testing.T) {
		srv := &scripted{steps: []step{{err: unavailable}, {msgs: 1}}}
		_, err := watch(t, srv)
		if !errors.Is(err, retry.ErrNotIdempotent) || len(srv.seen()) != 1 {
			t.Errorf("err = %v after %d calls", err, len(srv.seen()))
		}
	})
}

// inputs is a TestService whose client-streaming call fails its first
// call after reading every message, and records how many each call read.
type inputs struct {
	testpb.UnimplementedTestServiceServer
	mu    sync.Mutex
	reads []int
}

func (s *inputs) StreamingInputCall(stream testpb.TestService_StreamingInputCallServer) error {
	n, size := 0, 0
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		n, size = n+1, size+len(m.GetPayload().GetBody())
	}
	s.mu.Lock()
	s.reads = append(s.reads, n)
	first := len(s.reads) == 1
	s.mu.Unlock()
	if first {
		return unavailable
	}
	return stream.SendAndClose(&testpb.StreamingInputCallResponse{AggregatedPayloadSize: int32(size)})
}

func (s *inputs) calls() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.reads...)
}

func serveInputs(t *testing.T, srv *inputs, i *grpcretry.Interceptor) testpb.TestServiceClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	testpb.RegisterTestServiceServer(s, srv)
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(lis) }()
	t.Cleanup(func() { s.Stop(); <-done })
	opts, err := i.DialOptions()
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient(lis.Addr().String(), append(opts, grpc.WithTransportCredentials(insecureCreds()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return testpb.NewTestServiceClient(cc)
}

func sendAll(t *testing.T, client testpb.TestServiceClient, bodies ...string) (*testpb.StreamingInputCallResponse, error) {
	t.Helper()
	if len(bodies) == 0 {
		bodies = []string{"a", "bb", "ccc"}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up, err := client.StreamingInputCall(ctx)
	if err != nil {
		return nil, err
	}
	for _, body := range bodies {
		if err := up.Send(&testpb.StreamingInputCallRequest{Payload: &testpb.Payload{Body: []byte(body)}}); err != nil {
			return nil, err
		}
	}
	return up.CloseAndRecv()
}

func TestAClientStreamIsReplayedOnlyWhenDeclaredReplayable(t *testing.T) {
	const method = "/grpc.testing.TestService/StreamingInputCall"
	t.Run("by default it is sent once", func(t *testing.T) {
		srv := &inputs{}
		i := interceptor(t, fast(t, nil, retry.Idempotent()))
		_, err := sendAll(t, serveInputs(t, srv, i))
		if status.Code(err) != codes.Unavailable || len(srv.calls()) != 1 {
			t.Errorf("err = %v after %d calls, want UNAVAILABLE after 1", err, len(srv.calls()))
		}
	})
	t.Run("replayable, its messages are sent again", func(t *testing.T) {
		srv := &inputs{}
		i := interceptor(t, fast(t, nil, retry.Idempotent()), grpcretry.WithReplayableStreams(method))
		resp, err := sendAll(t, serveInputs(t, srv, i))
		if err != nil || resp.GetAggregatedPayloadSize() != 6 {
			t.Fatalf("resp = %v, err = %v; want 6 bytes", resp, err)
		}
		if reads := srv.calls(); len(reads) != 2 || reads[0] != 3 || reads[1] != 3 {
			t.Errorf("calls read %v messages, want [3 3]", reads)
		}
	})
}

// The Retrier's attempt timeout bounds the wait for the first message
// only: a first attempt that sends nothing in time is retried; the stream
// that delivered its first message outlives the attempt timeout.
func TestAnAttemptTimeoutBoundsOnlyTheWaitForTheFirstMessage(t *testing.T) {
	hold := make(chan struct{})
	srv := &scripted{steps: []step{{block: true}, {msgs: 2, hold: hold}}}
	r := fast(t, nil, retry.WithAttemptTimeout(20*time.Millisecond))
	i := interceptor(t, r, grpcretry.WithIdempotentMethods(watchMethod))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := dial(t, serve(t, srv), i).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatalf("first message: %v", err)
	}
	time.Sleep(40 * time.Millisecond) // past the attempt timeout
	close(hold)
	if _, err := w.Recv(); err != nil {
		t.Errorf("second message, after the attempt timeout: %v", err)
	}
	if got := len(srv.seen()); got != 2 {
		t.Errorf("server saw %d calls, want 2", got)
	}
}

// grpc-go TestRetryStreaming, "Overflowing buffer - no retry", which we
// agree with: past 256 KiB sent before the first reply, a
// replayable stream is sent once, so that its memory stays bounded.
func TestAReplayableStreamThatSentTooMuchIsNotReplayed(t *testing.T) {
	const method = "/grpc.testing.TestService/StreamingInputCall"
	srv := &inputs{}
	i := interceptor(t, fast(t, nil, retry.Idempotent()), grpcretry.WithReplayableStreams(method))
	big := string(make([]byte, 100<<10))
	_, err := sendAll(t, serveInputs(t, srv, i), big, big, big)
	var rerr *retry.Error
	if !errors.As(err, &rerr) || rerr.Decision.Reason != classify.ReasonGRPCReplayOverflow || status.Code(err) != codes.Unavailable {
		t.Fatalf("err = %v, want the UNAVAILABLE, not retried: %s", err, classify.ReasonGRPCReplayOverflow)
	}
	if reads := srv.calls(); len(reads) != 1 || reads[0] != 3 {
		t.Errorf("calls read %v messages, want [3]", reads)
	}
}
