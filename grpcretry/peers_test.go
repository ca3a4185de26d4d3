package grpcretry_test

// Cases ported from grpc-go's test/retry_test.go (v1.85.0) and
// go-grpc-middleware v2's interceptors/retry/retry_test.go (v2.3.4). Where
// this module disagrees, the test asserts this module's behaviour and says
// what the peer does, and why we differ.

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/observe"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// grpc-go TestRetryUnary: the server answers OK on its calls 0, 2 and 5,
// INTERNAL on 6, 8 and 11, ALREADY_EXISTS otherwise; its service config
// retries ALREADY_EXISTS, at most 4 attempts. Our table never retries
// ALREADY_EXISTS and retries INTERNAL once; a caller's classifier says what
// that service config says, and the counts are grpc-go's exactly.
func TestPeerGrpcGoRetryUnaryWithTheSameCodesByOverride(t *testing.T) {
	var mu sync.Mutex
	i := -1
	srv := &funcHealth{check: func() error {
		mu.Lock()
		defer mu.Unlock()
		i++
		switch i {
		case 0, 2, 5:
			return nil
		case 6, 8, 11:
			return status.Error(codes.Internal, "non-retryable error")
		}
		return status.Error(codes.AlreadyExists, "retryable error")
	}}
	likeTheServiceConfig := func(err error) classify.Decision {
		switch status.Code(err) {
		case codes.AlreadyExists:
			return classify.Decision{Verdict: classify.Retry, Reason: "retryable by service config"}
		case codes.Internal:
			return classify.Decision{Verdict: classify.Stop, Reason: "not retryable by service config"}
		}
		return classify.Decision{}
	}
	r := fast(t, nil, retry.WithMaxAttempts(4), retry.WithClassifier(likeTheServiceConfig))
	ic := interceptor(t, r, grpcretry.WithIdempotentMethods(checkMethod))
	client := dial(t, serve(t, srv), ic)
	for _, tc := range []struct {
		wantCode  codes.Code
		wantCount int
	}{{codes.OK, 0}, {codes.OK, 2}, {codes.OK, 5}, {codes.Internal, 6}, {codes.Internal, 8}, {codes.Internal, 11}, {codes.AlreadyExists, 15}} {
		_, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
		mu.Lock()
		got := i
		mu.Unlock()
		if status.Code(err) != tc.wantCode || got != tc.wantCount {
			t.Fatalf("Check = %v with the server at call %d; want %v at %d", err, got, tc.wantCode, tc.wantCount)
		}
	}
}

// funcHealth answers Check with check's error.
type funcHealth struct {
	healthpb.UnimplementedHealthServer
	check func() error
}

func (f *funcHealth) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	return &healthpb.HealthCheckResponse{}, nil
}

// duplex is a TestService whose FullDuplexCall plays one function per
// call.
type duplex struct {
	testpb.UnimplementedTestServiceServer
	mu    sync.Mutex
	calls int
	plays []func(testpb.TestService_FullDuplexCallServer) error
}

func (d *duplex) FullDuplexCall(stream testpb.TestService_FullDuplexCallServer) error {
	d.mu.Lock()
	play := d.plays[min(d.calls, len(d.plays)-1)]
	d.calls++
	d.mu.Unlock()
	return play(stream)
}

func (d *duplex) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls
}

// readAll reads the client's messages to their end and returns their sizes.
func readAll(stream testpb.TestService_FullDuplexCallServer) ([]int32, error) {
	var sizes []int32
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return sizes, nil
		}
		if err != nil {
			return nil, err
		}
		sizes = append(sizes, m.GetResponseParameters()[0].GetSize())
	}
}

func serveDuplex(t *testing.T, d *duplex, ic *grpcretry.Interceptor) testpb.TestServiceClient {
	t.Helper()
	lis := listen(t)
	s := grpc.NewServer()
	testpb.RegisterTestServiceServer(s, d)
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(lis) }()
	t.Cleanup(func() { s.Stop(); <-done })
	opts, err := ic.DialOptions()
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

const duplexMethod = "/grpc.testing.TestService/FullDuplexCall"

func request(size int32) *testpb.StreamingOutputCallRequest {
	return &testpb.StreamingOutputCallRequest{ResponseParameters: []*testpb.ResponseParameters{{Size: size}}}
}

// grpc-go TestRetryStreaming, "Replaying close send": the client sends 1
// and 2 and closes; the first call fails after reading them, the second
// answers 1, 3, 5. We agree, once the caller declares the method replayable
// (grpc-go replays every stream its service config names).
func TestPeerGrpcGoReplayingCloseSend(t *testing.T) {
	answer := func(stream testpb.TestService_FullDuplexCallServer) error {
		if _, err := readAll(stream); err != nil {
			return err
		}
		for _, n := range []int{1, 3, 5} {
			if err := stream.Send(&testpb.StreamingOutputCallResponse{Payload: &testpb.Payload{Body: make([]byte, n)}}); err != nil {
				return err
			}
		}
		return nil
	}
	fails := func(stream testpb.TestService_FullDuplexCallServer) error {
		if _, err := readAll(stream); err != nil {
			return err
		}
		return unavailable
	}
	d := &duplex{plays: []func(testpb.TestService_FullDuplexCallServer) error{fails, answer}}
	ic := interceptor(t, fast(t, nil, retry.Idempotent()), grpcretry.WithReplayableStreams(duplexMethod))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := serveDuplex(t, d, ic).FullDuplexCall(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int32{1, 2} {
		if err := stream.Send(request(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var got []int
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, len(m.GetPayload().GetBody()))
	}
	if len(got) != 3 || got[0] != 1 || got[2] != 5 || d.count() != 2 {
		t.Errorf("received %v in %d calls, want [1 3 5] in 2", got, d.count())
	}
}

// grpc-go TestRetryStreaming, "No retry after header": grpc-go commits a
// stream once the server's header arrives. We disagree: our rule is the
// first message — a header carries no output, so nothing was delivered that
// a retry would duplicate for the caller.
func TestPeerGrpcGoDisagreesAfterAHeader(t *testing.T) {
	headerThenFail := func(stream testpb.TestService_FullDuplexCallServer) error {
		if _, err := readAll(stream); err != nil {
			return err
		}
		if err := stream.SendHeader(metadata.Pairs("k", "v")); err != nil {
			return err
		}
		return unavailable
	}
	answer := func(stream testpb.TestService_FullDuplexCallServer) error {
		if _, err := readAll(stream); err != nil {
			return err
		}
		return stream.Send(&testpb.StreamingOutputCallResponse{})
	}
	d := &duplex{plays: []func(testpb.TestService_FullDuplexCallServer) error{headerThenFail, answer}}
	ic := interceptor(t, fast(t, nil, retry.Idempotent()), grpcretry.WithReplayableStreams(duplexMethod))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := serveDuplex(t, d, ic).FullDuplexCall(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(request(1)); err != nil {
		t.Fatal(err)
	}
	_ = stream.CloseSend()
	if _, err := stream.Recv(); err != nil || d.count() != 2 {
		t.Errorf("Recv = %v after %d calls; want a message after 2 (grpc-go: UNAVAILABLE after 1)", err, d.count())
	}
}

// go-grpc-middleware TestUnary_FailsOnNonRetriableError: INTERNAL is not
// in its codes, so one request is made. We disagree: INTERNAL is retried
// once, like an HTTP 500 (a proxy's reset stream shows as INTERNAL too), and
// only for a call that is idempotent or keyed.
func TestPeerMiddlewareDisagreesOnInternal(t *testing.T) {
	srv := &scripted{steps: []step{{err: status.Error(codes.Internal, "boom")}}}
	_, err := dial(t, serve(t, srv), interceptor(t, fast(t, nil), grpcretry.WithIdempotentMethods(checkMethod))).
		Check(context.Background(), &healthpb.HealthCheckRequest{})
	if status.Code(err) != codes.Internal || len(srv.seen()) != 2 {
		t.Errorf("err = %v after %d requests; want INTERNAL after 2 (go-grpc-middleware: 1)", err, len(srv.seen()))
	}
}

// go-grpc-middleware TestUnary_FailsOnNonRetriableContextError: CANCELLED,
// one request. We agree.
func TestPeerMiddlewareCancelledIsNotRetried(t *testing.T) {
	srv := &scripted{steps: []step{{err: status.Error(codes.Canceled, "cancelled")}}}
	_, err := dial(t, serve(t, srv), interceptor(t, fast(t, nil), grpcretry.WithIdempotentMethods(checkMethod))).
		Check(context.Background(), &healthpb.HealthCheckRequest{})
	if status.Code(err) != codes.Canceled || len(srv.seen()) != 1 {
		t.Errorf("err = %v after %d requests; want CANCELLED after 1", err, len(srv.seen()))
	}
}

// go-grpc-middleware TestUnary_OnRetryCallbackCalled: two UNAVAILABLE then
// OK calls the retry callback twice; our hook sees two RetryScheduled. We
// agree, for an idempotent method: for another, go-grpc-middleware retries
// and we do not (the server may have processed it).
func TestPeerMiddlewareRetryCallbackCount(t *testing.T) {
	var events []observe.Event
	srv := &scripted{steps: []step{{err: unavailable}, {err: unavailable}, {}}}
	_, err := dial(t, serve(t, srv), interceptor(t, fast(t, &events), grpcretry.WithIdempotentMethods(checkMethod))).
		Check(context.Background(), &healthpb.HealthCheckRequest{})
	scheduled := 0
	for _, e := range events {
		if e.Kind == observe.RetryScheduled {
			scheduled++
		}
	}
	if err != nil || scheduled != 2 {
		t.Errorf("err = %v, %d retries scheduled; want nil, 2", err, scheduled)
	}
}

// go-grpc-middleware retries RESOURCE_EXHAUSTED by default
// (DefaultRetriableCodes). We disagree: without a server wait it may be a
// quota measured in hours (AIP-194), so it is final.
func TestPeerMiddlewareDisagreesOnResourceExhausted(t *testing.T) {
	srv := &scripted{steps: []step{{err: status.Error(codes.ResourceExhausted, "quota")}, {}}}
	_, err := dial(t, serve(t, srv), interceptor(t, fast(t, nil), grpcretry.WithIdempotentMethods(checkMethod))).
		Check(context.Background(), &healthpb.HealthCheckRequest{})
	if !errors.Is(err, retry.ErrPermanent) || len(srv.seen()) != 1 {
		t.Errorf("err = %v after %d requests; want final after 1 (go-grpc-middleware: retried)", err, len(srv.seen()))
	}
}

// grpc-go TestRetryStreaming, "No retry after context": the client sends 1
// and asks for the stream's Context before any reply; the server fails the
// call with UNAVAILABLE after reading 1. grpc-go commits the stream at
// Context — the caller may have handed the context on — and returns the
// UNAVAILABLE, after one call. We agree: Context opens the stream once,
// without retries, as Header does.
func TestPeerGrpcGoNoRetryAfterContext(t *testing.T) {
	readOneThen := func(answer bool) func(testpb.TestService_FullDuplexCallServer) error {
		return func(stream testpb.TestService_FullDuplexCallServer) error {
			if _, err := stream.Recv(); err != nil {
				return err
			}
			if answer {
				return stream.Send(&testpb.StreamingOutputCallResponse{})
			}
			return unavailable
		}
	}
	d := &duplex{plays: []func(testpb.TestService_FullDuplexCallServer) error{readOneThen(false), readOneThen(true)}}
	ic := interceptor(t, fast(t, nil, retry.Idempotent()), grpcretry.WithReplayableStreams(duplexMethod))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := serveDuplex(t, d, ic).FullDuplexCall(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(request(1)); err != nil {
		t.Fatal(err)
	}
	if stream.Context() == nil {
		t.Fatal("Context() = nil")
	}
	if _, err := stream.Recv(); status.Code(err) != codes.Unavailable || d.count() != 1 {
		t.Errorf("Recv = %v after %d calls; want UNAVAILABLE after 1", err, d.count())
	}
}

// The same for a server stream: Context before the first message opens the
// stream once; a failure then is the call's.
func TestAServerStreamIsNotRetriedAfterItsContextWasAskedFor(t *testing.T) {
	srv := &scripted{steps: []step{{err: unavailable}, {msgs: 1}}}
	i := interceptor(t, fast(t, nil), grpcretry.WithIdempotentMethods(watchMethod))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := dial(t, serve(t, srv), i).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if w.Context() == nil {
		t.Fatal("Context() = nil")
	}
	if _, err := w.Recv(); status.Code(err) != codes.Unavailable || len(srv.seen()) != 1 {
		t.Errorf("Recv = %v after %d calls; want UNAVAILABLE after 1", err, len(srv.seen()))
	}
}
