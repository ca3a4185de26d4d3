package grpcretry_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/observe"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

func pushbackMS(v ...string) metadata.MD { return metadata.MD{"grpc-retry-pushback-ms": v} }

func withRetryInfo(code codes.Code, d time.Duration) error {
	s, err := status.New(code, "scripted: come back later").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(d)})
	if err != nil {
		panic(err)
	}
	return s.Err()
}

// The server's wait — the pushback trailer or a RetryInfo detail — is
// authoritative, like Retry-After: never retry earlier; a wait over the
// policy's MaxDelay (here 1s) is returned, not slept; a negative or
// malformed pushback means "do not retry".
func TestServerPushback(t *testing.T) {
	rows := []struct {
		name      string
		fail      step
		calls     int
		stop      error         // nil: the second attempt succeeds
		waitAtLst time.Duration // the wait before the second attempt, at least
		retryAftr time.Duration // in the *retry.Error
		reason    string
	}{
		{name: "a trailer in range is waited", fail: step{err: unavailable, trailer: pushbackMS("20")}, calls: 2, waitAtLst: 20 * time.Millisecond},
		{name: "a RetryInfo in range is waited", fail: step{err: withRetryInfo(codes.Unavailable, 20*time.Millisecond)}, calls: 2, waitAtLst: 20 * time.Millisecond},
		{name: "the longer of the two is waited", fail: step{err: withRetryInfo(codes.Unavailable, 30*time.Millisecond), trailer: pushbackMS("10")}, calls: 2, waitAtLst: 30 * time.Millisecond},
		{name: "RESOURCE_EXHAUSTED with a trailer is retried", fail: step{err: status.Error(codes.ResourceExhausted, "rate"), trailer: pushbackMS("5")}, calls: 2, waitAtLst: 5 * time.Millisecond},
		{name: "RESOURCE_EXHAUSTED with a RetryInfo is retried", fail: step{err: withRetryInfo(codes.ResourceExhausted, 5*time.Millisecond)}, calls: 2, waitAtLst: 5 * time.Millisecond},
		{name: "RESOURCE_EXHAUSTED without a wait is final, like a spend cap", fail: step{err: status.Error(codes.ResourceExhausted, "quota")}, calls: 1, stop: retry.ErrPermanent, reason: classify.ReasonGRPCResourceExhausted},
		{name: "a trailer too long is returned, not slept", fail: step{err: unavailable, trailer: pushbackMS("60000")}, calls: 1, stop: retry.ErrWaitTooLong, retryAftr: time.Minute},
		{name: "a RetryInfo too long is returned, not slept", fail: step{err: withRetryInfo(codes.Unavailable, time.Hour)}, calls: 1, stop: retry.ErrWaitTooLong, retryAftr: time.Hour},
		{name: "a huge trailer saturates", fail: step{err: unavailable, trailer: pushbackMS("99999999999999999999")}, calls: 1, stop: retry.ErrWaitTooLong},
		{name: "a negative trailer means do not retry", fail: step{err: unavailable, trailer: pushbackMS("-1")}, calls: 1, stop: retry.ErrPermanent, reason: classify.ReasonGRPCPushbackStop},
		{name: "a malformed trailer means do not retry", fail: step{err: unavailable, trailer: pushbackMS("soon")}, calls: 1, stop: retry.ErrPermanent, reason: classify.ReasonGRPCPushbackStop},
		{name: "two trailer values mean do not retry", fail: step{err: unavailable, trailer: pushbackMS("1", "2")}, calls: 1, stop: retry.ErrPermanent, reason: classify.ReasonGRPCPushbackStop},
		{name: "a pushback does not make a final code retryable", fail: step{err: status.Error(codes.InvalidArgument, "bad"), trailer: pushbackMS("1")}, calls: 1, stop: retry.ErrPermanent, reason: classify.ReasonGRPCInvalidArgument},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			var events []observe.Event
			srv := &scripted{steps: []step{row.fail, {}}}
			r := fast(t, &events, retry.WithMaxDelay(time.Second))
			i := interceptor(t, r, grpcretry.WithIdempotentMethods(checkMethod))
			_, err := dial(t, serve(t, srv), i).Check(context.Background(), &healthpb.HealthCheckRequest{})
			if got := len(srv.seen()); got != row.calls {
				t.Errorf("server saw %d calls, want %d", got, row.calls)
			}
			if row.stop == nil {
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range events {
					if e.Kind == observe.RetryScheduled && e.Delay < row.waitAtLst {
						t.Errorf("waited %v, want at least the server's %v", e.Delay, row.waitAtLst)
					}
				}
				return
			}
			var rerr *retry.Error
			if !errors.Is(err, row.stop) || !errors.As(err, &rerr) {
				t.Fatalf("err = %v, want %v", err, row.stop)
			}
			if row.retryAftr > 0 && rerr.RetryAfter != row.retryAftr {
				t.Errorf("RetryAfter = %v, want %v", rerr.RetryAfter, row.retryAftr)
			}
			if row.reason != "" && rerr.Decision.Reason != row.reason {
				t.Errorf("reason = %q, want %q", rerr.Decision.Reason, row.reason)
			}
		})
	}
}

// What the server said is obeyed whatever a caller's classifier says: one
// that retries every UNAVAILABLE neither retries against a "do not retry"
// pushback nor sooner than the server asked.
func TestThePushbackIsObeyedWhateverTheCallersClassifier(t *testing.T) {
	retryEveryUnavailable := func(err error) classify.Decision {
		if status.Code(err) == codes.Unavailable {
			return classify.Decision{Verdict: classify.Retry, Reason: "mine"}
		}
		return classify.Decision{}
	}
	rows := []struct {
		name     string
		trailer  metadata.MD
		calls    int
		waitedAt time.Duration // at least, before the second call
	}{
		{"a negative pushback stops the call", pushbackMS("-1"), 1, 0},
		{"a malformed pushback stops the call", pushbackMS("xxx"), 1, 0},
		{"two pushback values stop the call", pushbackMS("1", "2"), 1, 0},
		{"a pushback of 1000 is waited", pushbackMS("1000"), 2, time.Second},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			srv := &timed{scripted: scripted{steps: []step{{err: unavailable, trailer: row.trailer}, {}}}}
			r := fast(t, nil, retry.WithClassifier(retryEveryUnavailable), retry.WithMaxDelay(5*time.Second))
			_, err := dial(t, serve(t, srv), interceptor(t, r, grpcretry.WithIdempotentMethods(checkMethod))).
				Check(context.Background(), &healthpb.HealthCheckRequest{})
			starts := srv.starts()
			if len(starts) != row.calls {
				t.Fatalf("server saw %d calls, want %d (err %v)", len(starts), row.calls, err)
			}
			if row.calls == 2 {
				if gap := starts[1].Sub(starts[0]); err != nil || gap < row.waitedAt {
					t.Errorf("err = %v, the second call %v after the first; want success after at least %v", err, gap, row.waitedAt)
				}
				return
			}
			var rerr *retry.Error
			if !errors.Is(err, retry.ErrPermanent) || !errors.As(err, &rerr) || rerr.Decision.Reason != classify.ReasonGRPCPushbackStop {
				t.Errorf("err = %v, want ErrPermanent classified %q", err, classify.ReasonGRPCPushbackStop)
			}
		})
	}
}

// timed is a scripted health server that also records when each Check
// began.
type timed struct {
	scripted
	mu sync.Mutex
	at []time.Time
}

func (s *timed) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	s.mu.Lock()
	s.at = append(s.at, time.Now())
	s.mu.Unlock()
	return s.scripted.Check(ctx, req)
}

func (s *timed) starts() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.at...)
}
