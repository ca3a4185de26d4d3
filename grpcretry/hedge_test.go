package grpcretry_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/hedge"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/descriptorpb"
)

// play is what a racer does on one call, given the call's context.
type play func(ctx context.Context) error

// racer is a health server whose call n (from 0, Check and Watch alike)
// plays plays[n] (the last one repeats; a Watch sends one message when its
// play says nil), and records each call's start, its
// grpc-previous-rpc-attempts, how many ran at once at most, and how many
// saw their context cancelled.
type racer struct {
	healthpb.UnimplementedHealthServer
	plays []play

	mu        sync.Mutex
	starts    []time.Time
	previous  [][]string
	running   int
	most      int
	cancelled int
}

func (s *racer) begin(ctx context.Context) play {
	s.mu.Lock()
	defer s.mu.Unlock()
	md, _ := metadata.FromIncomingContext(ctx)
	s.starts, s.previous = append(s.starts, time.Now()), append(s.previous, md["grpc-previous-rpc-attempts"])
	s.running++
	s.most = max(s.most, s.running)
	return s.plays[min(len(s.starts)-1, len(s.plays)-1)]
}

func (s *racer) end(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	if errors.Is(ctx.Err(), context.Canceled) {
		s.cancelled++
	}
}

func (s *racer) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	p := s.begin(ctx)
	defer s.end(ctx)
	if err := p(ctx); err != nil {
		return nil, err
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (s *racer) Watch(_ *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	ctx := stream.Context()
	p := s.begin(ctx)
	defer s.end(ctx)
	if err := p(ctx); err != nil {
		return err
	}
	return stream.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
}

// seen returns when each call started, relative to the first, and what
// each said of the attempts before it.
func (s *racer) seen() (gaps []time.Duration, previous [][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, at := range s.starts {
		gaps = append(gaps, at.Sub(s.starts[0]))
	}
	return gaps, slices.Clone(s.previous)
}

func (s *racer) concurrency() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.most
}

// eventuallyCancelled waits, a second at most, for n calls to have seen
// their context cancelled: the client's cancellation reaches the server a
// moment after the call returned.
func (s *racer) eventuallyCancelled(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
		s.mu.Lock()
		got := s.cancelled
		s.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls saw their context cancelled, want %d", got, n)
		}
	}
}

// The plays.
func answer(context.Context) error { return nil }

func hang(ctx context.Context) error {
	<-ctx.Done()
	return status.FromContextError(ctx.Err()).Err()
}

func fail(err error, trailer metadata.MD) play {
	return func(ctx context.Context) error {
		if trailer != nil {
			_ = grpc.SetTrailer(ctx, trailer)
		}
		return err
	}
}

func after(d time.Duration, then play) play {
	return func(ctx context.Context) error {
		select {
		case <-time.After(d):
			return then(ctx)
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	}
}

// hedging returns an Interceptor of r that hedges after delay, 3 in flight
// at most, with Check (and Watch) declared idempotent unless opts say
// otherwise.
func hedging(t *testing.T, r *retry.Retrier, delay time.Duration, opts ...grpcretry.Option) *grpcretry.Interceptor {
	t.Helper()
	if opts == nil {
		opts = []grpcretry.Option{grpcretry.WithIdempotentMethods(checkMethod, watchMethod)}
	}
	return interceptor(t, r, append(opts, grpcretry.WithHedging(hedge.Fixed(delay), 3))...)
}

// WithHedging hedges: an idempotent call still without an answer after
// the hedging delay is sent again alongside; the first answer wins, the
// slow attempt is cancelled, and the hedge says one attempt went before it.
func TestWithHedgingHedgesAnIdempotentCall(t *testing.T) {
	srv := &racer{plays: []play{hang, answer}}
	const delay = 20 * time.Millisecond
	var mu sync.Mutex
	var sent []time.Time // by the client: the first call's server start includes the connection's setup
	each := func(ctx context.Context, m string, req, reply any, cc *grpc.ClientConn, inv grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		mu.Lock()
		sent = append(sent, time.Now())
		mu.Unlock()
		return inv(ctx, m, req, reply, cc, opts...)
	}
	client := dial(t, serve(t, srv), hedging(t, fast(t, nil), delay), grpc.WithChainUnaryInterceptor(each)) // runs once per attempt
	resp, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check = %v, %v; want SERVING", resp, err)
	}
	gaps, previous := srv.seen()
	if len(gaps) != 2 || len(sent) != 2 || sent[1].Sub(sent[0]) < delay {
		t.Fatalf("%d calls, sent at %v; want 2, the hedge at least %v after the first", len(gaps), sent, delay)
	}
	slices.SortFunc(previous, slices.Compare) // the server may see them in another order than they were sent
	if previous[0] != nil || !slices.Equal(previous[1], []string{"1"}) {
		t.Errorf("grpc-previous-rpc-attempts %q, want none and 1", previous)
	}
	srv.eventuallyCancelled(t, 1)
}

// Hedging as gRFC A6 specifies it, each rule against a real server.
func TestHedgingFollowsGRFCA6(t *testing.T) {
	t.Run("the Retrier's MaxAttempts counts the hedges", func(t *testing.T) {
		t.Parallel()
		srv := &racer{plays: []play{hang}}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := dial(t, serve(t, srv), hedging(t, fast(t, nil), 10*time.Millisecond)).Check(ctx, &healthpb.HealthCheckRequest{})
		gaps, previous := srv.seen()
		if len(gaps) != 3 || status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("%d calls, err %v; want 3 (MaxAttempts 3, 3 in flight allowed), then the caller's deadline", len(gaps), err)
		}
		// The server may see them in another order than they were sent.
		slices.SortFunc(previous, slices.Compare)
		if want := [][]string{nil, {"1"}, {"2"}}; !slices.EqualFunc(previous, want, slices.Equal) {
			t.Errorf("grpc-previous-rpc-attempts %q, want %q in some order", previous, want)
		}
	})
	t.Run("a non-fatal failure sends the next attempt at once", func(t *testing.T) {
		t.Parallel()
		srv := &racer{plays: []play{fail(unavailable, nil), answer}}
		r := fast(t, nil, retry.WithBackoff(backoff.Constant(10*time.Second)))
		start := time.Now()
		_, err := dial(t, serve(t, srv), hedging(t, r, time.Hour)).Check(context.Background(), &healthpb.HealthCheckRequest{})
		if gaps, _ := srv.seen(); err != nil || len(gaps) != 2 || time.Since(start) > 5*time.Second {
			t.Errorf("err %v after %d calls in %v; want success after 2, neither the hedging delay nor the backoff waited", err, len(gaps), time.Since(start))
		}
	})
	t.Run("a fatal failure cancels the others and ends the call", func(t *testing.T) {
		t.Parallel()
		srv := &racer{plays: []play{hang, fail(status.Error(codes.InvalidArgument, "bad"), nil)}}
		_, err := dial(t, serve(t, srv), hedging(t, fast(t, nil), 20*time.Millisecond)).Check(context.Background(), &healthpb.HealthCheckRequest{})
		var rerr *retry.Error
		if !errors.Is(err, retry.ErrPermanent) || !errors.As(err, &rerr) || status.Code(err) != codes.InvalidArgument {
			t.Fatalf("err = %v, want the hedge's INVALID_ARGUMENT, final", err)
		}
		if gaps, _ := srv.seen(); len(gaps) != 2 || rerr.Decision.Reason != classify.ReasonGRPCInvalidArgument {
			t.Errorf("%d calls, decision %v; want 2, %s", len(gaps), rerr.Decision, classify.ReasonGRPCInvalidArgument)
		}
		srv.eventuallyCancelled(t, 1)
	})
	t.Run("a do-not-retry pushback stops the hedges; an attempt in flight may still win", func(t *testing.T) {
		t.Parallel()
		srv := &racer{plays: []play{after(300*time.Millisecond, answer), fail(unavailable, pushbackMS("-1")), answer}}
		_, err := dial(t, serve(t, srv), hedging(t, fast(t, nil), 20*time.Millisecond)).Check(context.Background(), &healthpb.HealthCheckRequest{})
		if gaps, _ := srv.seen(); err != nil || len(gaps) != 2 {
			t.Errorf("err %v after %d calls; want the first attempt's success, and no hedge after the pushback", err, len(gaps))
		}
	})
	t.Run("a pushback's wait delays the next attempt", func(t *testing.T) {
		t.Parallel()
		srv := &racer{plays: []play{fail(unavailable, pushbackMS("100")), answer}}
		_, err := dial(t, serve(t, srv), hedging(t, fast(t, nil), time.Hour)).Check(context.Background(), &healthpb.HealthCheckRequest{})
		if gaps, _ := srv.seen(); err != nil || len(gaps) != 2 || gaps[1] < 100*time.Millisecond {
			t.Errorf("err %v, calls at %v; want success, the second after at least 100ms", err, gaps)
		}
	})
}

// Only a call that may run twice at once is hedged: an idempotent method
// (declared, or by its descriptor), a keyed call, or any call of a
// retry.Idempotent Retrier. Any other makes its attempts one at a time.
func TestOnlyIdempotentOrKeyedCallsAreHedged(t *testing.T) {
	keyedCtx := func(t *testing.T) context.Context {
		ctx, err := retry.WithIdempotencyKey(context.Background(), "order-42")
		if err != nil {
			t.Fatal(err)
		}
		return ctx
	}
	rows := []struct {
		name   string
		opts   []grpcretry.Option
		ctx    func(*testing.T) context.Context
		policy []retry.Option
		hedged bool
	}{
		{"neither idempotent nor keyed: one at a time", []grpcretry.Option{}, nil, nil, false},
		{"keyed: hedged", []grpcretry.Option{}, keyedCtx, nil, true},
		{"idempotent by its descriptor: hedged",
			[]grpcretry.Option{grpcretry.WithFiles(healthWithLevels(t, descriptorpb.MethodOptions_NO_SIDE_EFFECTS))}, nil, nil, true},
		{"any call of a retry.Idempotent Retrier: hedged", []grpcretry.Option{}, nil, []retry.Option{retry.Idempotent()}, true},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			srv := &racer{plays: []play{after(200*time.Millisecond, answer)}}
			ctx := context.Background()
			if row.ctx != nil {
				ctx = row.ctx(t)
			}
			r := fast(t, nil, row.policy...)
			_, err := dial(t, serve(t, srv), hedging(t, r, 10*time.Millisecond, row.opts...)).Check(ctx, &healthpb.HealthCheckRequest{})
			gaps, _ := srv.seen()
			if hedged := len(gaps) > 1; err != nil || hedged != row.hedged {
				t.Errorf("err %v after %d calls (%d at once); want hedged: %v", err, len(gaps), srv.concurrency(), row.hedged)
			}
		})
	}
}

// A call given grpc.Header (or Trailer, or Peer) is not hedged: several
// attempts would write the caller's variable at once.
func TestACallThatAsksForAnAttemptsHeaderIsNotHedged(t *testing.T) {
	srv := &racer{plays: []play{after(60*time.Millisecond, answer)}}
	var header metadata.MD
	_, err := dial(t, serve(t, srv), hedging(t, fast(t, nil), 10*time.Millisecond)).
		Check(context.Background(), &healthpb.HealthCheckRequest{}, grpc.Header(&header))
	if gaps, _ := srv.seen(); err != nil || len(gaps) != 1 || header == nil {
		t.Errorf("err %v after %d calls, header %v; want success after 1, with its header", err, len(gaps), header)
	}
}

// WithHedging hedges unary calls; streams are retried, not hedged: a
// stream's attempts go one at a time.
func TestAStreamOnAHedgingInterceptorMakesItsAttemptsOneAtATime(t *testing.T) {
	srv := &racer{plays: []play{after(60*time.Millisecond, fail(unavailable, nil)), answer}}
	i := hedging(t, fast(t, nil), 10*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := dial(t, serve(t, srv), i).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; err == nil; n++ {
		_, err = w.Recv()
	}
	gaps, _ := srv.seen()
	if !errors.Is(err, io.EOF) || n != 2 || len(gaps) != 2 || srv.concurrency() != 1 {
		t.Errorf("Recv ended with %v after %d messages, %d calls, %d at once; want io.EOF after 1 message, 2 calls, one at a time",
			err, n-1, len(gaps), srv.concurrency())
	}
}
