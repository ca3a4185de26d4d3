package grpcretry_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/policy"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// refusing returns a throttler that refuses every attempt once its
// probability is above zero: one answer not accepted (1/2) is enough.
func refusing(t *testing.T) *limit.Throttler {
	t.Helper()
	th, err := limit.NewThrottler(limit.ThrottlerConfig{Rand: func() uint64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	return th
}

// checkLimited checks that err is a local refusal: retry.ErrLimited, with
// RESOURCE_EXHAUSTED as its status and a message that says so.
func checkLimited(t *testing.T, err error, attempts int) {
	t.Helper()
	var rerr *retry.Error
	if !errors.Is(err, retry.ErrLimited) || !errors.As(err, &rerr) {
		t.Fatalf("err = %v, want retry.ErrLimited", err)
	}
	if rerr.Attempts != attempts {
		t.Errorf("attempts = %d, want %d", rerr.Attempts, attempts)
	}
	s := status.Convert(err)
	if s.Code() != codes.ResourceExhausted || !strings.Contains(s.Message(), "refused locally") {
		t.Errorf("status = %v %q, want RESOURCE_EXHAUSTED, refused locally", s.Code(), s.Message())
	}
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("status.Code = %v", status.Code(err))
	}
}

func TestALimiterRefusalSendsNothing(t *testing.T) {
	t.Run("unary", func(t *testing.T) {
		th := refusing(t)
		th.Record(context.Background(), limit.Outcome{Result: limit.Throttled})
		srv := &scripted{}
		i := interceptor(t, fast(t, nil, retry.WithLimiter(th)))
		_, err := dial(t, serve(t, srv), i).Check(context.Background(), &healthpb.HealthCheckRequest{})
		checkLimited(t, err, 0)
		if n := len(srv.seen()); n != 0 {
			t.Errorf("the server saw %d calls, want 0", n)
		}
	})
	t.Run("server streaming", func(t *testing.T) {
		th := refusing(t)
		th.Record(context.Background(), limit.Outcome{Result: limit.Throttled})
		srv := &scripted{steps: []step{{msgs: 1}}}
		i := interceptor(t, fast(t, nil, retry.WithLimiter(th)))
		w, err := dial(t, serve(t, srv), i).Watch(context.Background(), &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err) // the stream opens at its first RecvMsg
		}
		_, err = w.Recv()
		checkLimited(t, err, 0)
		if n := len(srv.seen()); n != 0 {
			t.Errorf("the server saw %d calls, want 0", n)
		}
	})
}

// A retry the limiter refuses ends the call with the refusal's status, not
// the last attempt's UNAVAILABLE, which a retry layer around this one would
// retry; the *retry.Error keeps that attempt's error.
func TestALimiterRefusalOfARetry(t *testing.T) {
	srv := &scripted{steps: []step{{err: unavailable}, {}}}
	i := interceptor(t, fast(t, nil, retry.WithLimiter(refusing(t))),
		grpcretry.WithIdempotentMethods(checkMethod))
	_, err := dial(t, serve(t, srv), i).Check(context.Background(), &healthpb.HealthCheckRequest{})
	checkLimited(t, err, 1)
	if n := len(srv.seen()); n != 1 {
		t.Errorf("the server saw %d calls, want 1", n)
	}
	var rerr *retry.Error
	if errors.As(err, &rerr); status.Code(rerr.Last) != codes.Unavailable {
		t.Errorf("the last attempt's status = %v, want UNAVAILABLE", status.Code(rerr.Last))
	}
}

// spy is a limiter that lets every attempt through and keeps what it is
// told.
type spy struct {
	mu       sync.Mutex
	asked    int
	outcomes []limit.Outcome
}

func (s *spy) Acquire(context.Context, time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked++
	return true
}

func (s *spy) Record(_ context.Context, o limit.Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outcomes = append(s.outcomes, o)
}

func (s *spy) seen() (int, []limit.Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked, append([]limit.Outcome(nil), s.outcomes...)
}

// A RESOURCE_EXHAUSTED with the server's pushback is a rate the server
// enforces: the limiter learns that the attempt was throttled, with the
// wait. It needs limit.OutcomeOf to read grpcretry's reason (a change of
// the limit package); before it, the test skips.
func TestAServerPushbackTellsTheLimiterItWasThrottled(t *testing.T) {
	wait := 5 * time.Millisecond
	probe := classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonGRPCResourceExhausted, RetryAfter: wait}
	if limit.OutcomeOf(errors.New("x"), probe).Result != limit.Throttled {
		t.Skip("limit.OutcomeOf does not read gRPC's RESOURCE_EXHAUSTED yet")
	}
	l := &spy{}
	srv := &scripted{steps: []step{{err: status.Error(codes.ResourceExhausted, "rate"), trailer: pushbackMS("5")}, {}}}
	i := interceptor(t, fast(t, nil, retry.WithLimiter(l)), grpcretry.WithIdempotentMethods(checkMethod))
	if _, err := dial(t, serve(t, srv), i).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	asked, outcomes := l.seen()
	want := []limit.Outcome{{Result: limit.Throttled, RetryAfter: wait}, {Result: limit.Accepted}}
	if asked != 2 || len(outcomes) != 2 || outcomes[0] != want[0] || outcomes[1] != want[1] {
		t.Errorf("asked %d times, told %v; want 2, %v", asked, outcomes, want)
	}
}

// callKeyed is a limit.Keyed of call keys that says so (CallKeyed), so
// that a Retrier with it sets each call's key.
type callKeyed struct{ *limit.Keyed[breaker.Key] }

func (callKeyed) CallKeyed() bool { return true }

// keySpy is a limiter that lets every attempt through and keeps the call
// key of each attempt it is asked about.
type keySpy struct {
	mu   sync.Mutex
	keys []breaker.Key
	has  []bool
}

func (s *keySpy) Acquire(ctx context.Context, _ time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := breaker.KeyOf(ctx)
	s.keys, s.has = append(s.keys, k), append(s.has, ok)
	return true
}

func (s *keySpy) Record(context.Context, limit.Outcome) {}

// A limit.Keyed keyed by breaker.KeyOf keeps a limiter per (target,
// method): one method's limit does not slow another's.
func TestAKeyedLimiterPerTargetAndMethod(t *testing.T) {
	var mu sync.Mutex
	made := map[breaker.Key]*spy{}
	keyed, err := limit.NewKeyed(breaker.KeyOf, func(k breaker.Key) (limit.Limiter, error) {
		mu.Lock()
		defer mu.Unlock()
		made[k] = &spy{}
		return made[k], nil
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, &scripted{steps: []step{{msgs: 1}}})
	client := dial(t, addr, interceptor(t, fast(t, nil, retry.WithLimiter(callKeyed{keyed}))))
	if _, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	w, err := client.Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = w.Recv()
	}
	if err != io.EOF {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(made) != 2 {
		t.Fatalf("limiters made for %v, want one per method", made)
	}
	for _, m := range []string{checkMethod, watchMethod} {
		l := made[breaker.Key{Target: addr, Operation: m}]
		if l == nil {
			t.Fatalf("no limiter for (%s, %s) among %v", addr, m, made)
		}
		if asked, outcomes := l.seen(); asked != 1 || len(outcomes) != 1 || outcomes[0].Result != limit.Accepted {
			t.Errorf("%s: asked %d times, told %v; want once, accepted", m, asked, outcomes)
		}
	}
}

// The call key is set only when a stage of the Retrier reads it: a
// context value costs an allocation per call.
func TestTheCallKeyIsSetOnlyWhenTheRetrierReadsIt(t *testing.T) {
	addr := serve(t, &scripted{})
	cd, err := breaker.NewCooldowns(breaker.CooldownConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []struct {
		name string
		opts []retry.Option
		want bool
	}{
		{"a limiter that reads no key: none", nil, false},
		{"with cooldowns: (target, method)", []retry.Option{retry.WithCooldowns(cd)}, true},
	} {
		t.Run(row.name, func(t *testing.T) {
			l := &keySpy{}
			r := fast(t, nil, append(row.opts, retry.WithLimiter(l))...)
			if _, err := dial(t, addr, interceptor(t, r)).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
				t.Fatal(err)
			}
			want := breaker.Key{}
			if row.want {
				want = breaker.Key{Target: addr, Operation: checkMethod}
			}
			if len(l.has) != 1 || l.has[0] != row.want || l.keys[0] != want {
				t.Errorf("the limiter saw keys %v (set: %v), want %v (set: %v)", l.keys, l.has, want, row.want)
			}
		})
	}
}

// A call the policy refuses for want of an idempotency key sends nothing;
// its status is FAILED_PRECONDITION, the Retrier's message saying why.
func TestACallWithoutTheKeyThePolicyRequiresIsAFailedPrecondition(t *testing.T) {
	srv := &scripted{}
	r := fast(t, nil, retry.WithPolicy(policy.Policy{RequireKey: true}))
	_, err := dial(t, serve(t, srv), interceptor(t, r)).Check(context.Background(), &healthpb.HealthCheckRequest{})
	s := status.Convert(err)
	if !errors.Is(err, retry.ErrKeyRequired) || s.Code() != codes.FailedPrecondition || !strings.Contains(s.Message(), "idempotency key required") {
		t.Errorf("err = %v, status %v %q; want ErrKeyRequired, FAILED_PRECONDITION", err, s.Code(), s.Message())
	}
	if n := len(srv.seen()); n != 0 {
		t.Errorf("the server saw %d calls, want 0", n)
	}
}
