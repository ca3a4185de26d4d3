// Command grpc-client calls a flaky gRPC health server that it starts itself
// on a loopback port, through grpcretry's interceptors: an idempotent call
// retried, a server's pushback waited for, a pushback too long returned at
// once, a call that is not idempotent sent once and then retried with an
// idempotency key, and a server stream retried only before its first
// message. It prints what happened to each, attempts included.
//
//	go run ./examples/grpc-client
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/policy"
	"github.com/retrykit/retry/stream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "grpc-client:", err)
		os.Exit(1)
	}
}

// pushbackTrailer is the trailer in which a gRPC server tells its clients how
// long to wait before they retry, in milliseconds (gRFC A6); grpcretry obeys
// it.
const pushbackTrailer = "grpc-retry-pushback-ms"

// flaky is a health server that fails on purpose, by the service name
// asked: "warming" fails twice with UNAVAILABLE; "throttled" once with
// RESOURCE_EXHAUSTED and a 50ms pushback; "quota" always, with a two-minute
// pushback. List fails the first call of each idempotency key. Watch fails
// its first call before any message, and breaks its second after two.
type flaky struct {
	healthpb.UnimplementedHealthServer
	mu   sync.Mutex
	hits map[string]int
}

func (f *flaky) hit(what string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hits[what]++
	return f.hits[what]
}

func (f *flaky) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	n := f.hit("check " + req.GetService())
	switch {
	case req.GetService() == "warming" && n <= 2:
		return nil, status.Error(codes.Unavailable, "warming up")
	case req.GetService() == "throttled" && n == 1:
		_ = grpc.SetTrailer(ctx, metadata.Pairs(pushbackTrailer, "50"))
		return nil, status.Error(codes.ResourceExhausted, "slow down")
	case req.GetService() == "quota":
		_ = grpc.SetTrailer(ctx, metadata.Pairs(pushbackTrailer, "120000"))
		return nil, status.Error(codes.ResourceExhausted, "daily quota used up")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (f *flaky) List(ctx context.Context, _ *healthpb.HealthListRequest) (*healthpb.HealthListResponse, error) {
	key := metadata.ValueFromIncomingContext(ctx, grpcretry.MetadataKey)
	if f.hit(fmt.Sprint("list ", key)) == 1 {
		return nil, status.Error(codes.Unavailable, "connection to the database lost")
	}
	return &healthpb.HealthListResponse{Statuses: map[string]*healthpb.HealthCheckResponse{"a": {}, "b": {}}}, nil
}

func (f *flaky) Watch(_ *healthpb.HealthCheckRequest, s healthpb.Health_WatchServer) error {
	if f.hit("watch") == 1 {
		return status.Error(codes.Unavailable, "not ready")
	}
	for range 2 {
		if err := s.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}); err != nil {
			return err
		}
	}
	return status.Error(codes.Unavailable, "server restarting")
}

// tally counts the attempts of the call in progress, and the server's
// longest wait, as the Retrier's observer.
type tally struct {
	mu       sync.Mutex
	attempts int
	asked    time.Duration
}

func (t *tally) Observe(_ context.Context, e observe.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e.Kind {
	case observe.AttemptDone:
		t.attempts++
	case observe.RetryScheduled:
		t.asked = max(t.asked, e.Decision.RetryAfter)
	}
}

func (t *tally) take() (int, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, d := t.attempts, t.asked
	t.attempts, t.asked = 0, 0
	return n, d
}

// serve starts the flaky server on a loopback port.
func serve() (string, func(), error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, &flaky{hits: map[string]int{}})
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(lis) }()
	return lis.Addr().String(), func() { s.Stop(); <-done }, nil
}

// dial connects through grpcretry: Check and Watch only read, so they are
// declared idempotent; List is left as the descriptor says (nothing).
func dial(addr string, t *tally) (*grpc.ClientConn, error) {
	r, err := retry.New(retry.WithMaxAttempts(4), retry.WithBackoff(backoff.Constant(20*time.Millisecond)),
		retry.WithMaxDelay(10*time.Second), retry.WithObserver(t))
	if err != nil {
		return nil, err
	}
	i, err := grpcretry.New(r,
		grpcretry.WithIdempotentMethods("/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch"))
	if err != nil {
		return nil, err
	}
	opts, err := i.DialOptions()
	if err != nil {
		return nil, err
	}
	return grpc.NewClient(addr, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
}

func run(ctx context.Context, w io.Writer) error {
	addr, stop, err := serve()
	if err != nil {
		return err
	}
	defer stop()
	var t tally
	cc, err := dial(addr, &t)
	if err != nil {
		return err
	}
	defer cc.Close()
	client := healthpb.NewHealthClient(cc)

	for _, service := range []string{"warming", "throttled", "quota"} {
		resp, err := client.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
		report(w, "Check "+service, resp.GetStatus().String(), err, &t)
	}
	list, err := client.List(ctx, &healthpb.HealthListRequest{})
	report(w, "List, no key", fmt.Sprint(len(list.GetStatuses()), " services"), err, &t)
	keyed, err := retry.WithIdempotencyKey(ctx, "list-7")
	if err != nil {
		return err
	}
	list, err = client.List(keyed, &healthpb.HealthListRequest{})
	report(w, "List, key list-7", fmt.Sprint(len(list.GetStatuses()), " services"), err, &t)
	return watch(ctx, w, client, &t)
}

// watch reads a Watch to its end: opened after a retry, broken after two
// messages, and then not retried.
func watch(ctx context.Context, w io.Writer, client healthpb.HealthClient, t *tally) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := client.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return err
	}
	n := 0
	for {
		if _, err = s.Recv(); err != nil {
			break
		}
		n++
	}
	attempts, _ := t.take()
	fmt.Fprintf(w, "%-18s opened after %d attempt(s), %d message(s), then:\n", "Watch", attempts, n)
	var broke *stream.Error[any]
	if !errors.As(err, &broke) {
		return fmt.Errorf("watch ended with %v, want a *stream.Error", err)
	}
	fmt.Fprintf(w, "%-18s %v (%d kept in the error)\n", "", err, len(broke.Partial))
	return nil
}

// report prints one call's outcome and its attempts.
func report(w io.Writer, what, ok string, err error, t *tally) {
	attempts, asked := t.take()
	if err == nil {
		fmt.Fprintf(w, "%-18s %s after %d attempt(s)", what, ok, attempts)
		if asked > 0 {
			fmt.Fprintf(w, ", the server asked to wait %v", asked)
		}
		fmt.Fprintln(w)
		return
	}
	var rerr *retry.Error
	if !errors.As(err, &rerr) {
		fmt.Fprintf(w, "%-18s %v: %v\n", what, status.Code(err), err)
		return
	}
	// The whole error says all of this in one long line; a person reads it in two.
	fmt.Fprintf(w, "%-18s %v after %d attempt(s): %q\n", what, status.Code(err), rerr.Attempts, message(rerr.Last))
	fmt.Fprintf(w, "%-18s stopped (%v): %s\n", "", rerr.Stop, why(rerr))
}

// message is the server's message in the status that err wraps.
func message(err error) string {
	var s interface{ GRPCStatus() *status.Status }
	if errors.As(err, &s) {
		return s.GRPCStatus().Message()
	}
	return fmt.Sprint(err)
}

// why says in words why the retry loop stopped.
func why(e *retry.Error) string {
	switch e.Stop {
	case policy.StopWaitTooLong:
		return fmt.Sprintf("the server asked to wait %v, longer than the maximum delay", e.RetryAfter)
	case policy.StopNotIdempotent:
		return "the call may have reached the server, and is neither idempotent nor keyed"
	}
	return e.Reason.Error()
}
