package dlq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/limit"
)

// refuser is a client-side rate limiter that refuses every attempt.
type refuser struct{}

func (refuser) Acquire(context.Context, time.Duration) bool { return false }
func (refuser) Record(context.Context, limit.Outcome)       {}

// TestACallTheLimiterRefusedIsDeadLettered: a call the rate limiter refused
// sent nothing and did not do the job; it is given up on like any other, so
// its job is dead-lettered — not returned unstored, which a worker that
// acknowledges what it dead-lettered or failed for good would drop.
func TestACallTheLimiterRefusedIsDeadLettered(t *testing.T) {
	r, err := retry.New(retry.WithLimiter(refuser{}))
	if err != nil {
		t.Fatal(err)
	}
	q := memQueue()
	job := dlq.Job{ID: "7", Source: "llm-jobs", Payload: []byte("p")}
	calls := 0
	err = dlq.Do(context.Background(), r, q, job, func(context.Context) error { calls++; return nil })
	if calls != 0 || !errors.Is(err, retry.ErrLimited) {
		t.Fatalf("Do = %v after %d calls; want retry.ErrLimited and no call", err, calls)
	}
	if !errors.Is(err, dlq.ErrDeadLettered) {
		t.Errorf("Do = %v; want it dead-lettered (ErrDeadLettered), so that the worker may acknowledge the message", err)
	}
	l, err := q.Get(context.Background(), dlq.LetterID("llm-jobs", "7"))
	if err != nil || l.StopReason != "limited" || l.Attempts != 0 || l.Last.Error != retry.ErrLimited.Error() {
		t.Fatalf("letter = %+v, %v; want one with stop reason limited, no attempt, the refusal as its last error", l, err)
	}
}

// TestACallTheBreakerRefusedIsDeadLettered: the first job's failure opens
// the breaker, which refuses the second job's call before it runs.
func TestACallTheBreakerRefusedIsDeadLettered(t *testing.T) {
	b, err := breaker.New(breaker.Config{ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 1 }})
	if err != nil {
		t.Fatal(err)
	}
	r, err := retry.New(retry.WithBreakers(b), retry.WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	q := memQueue()
	ctx := context.Background()
	calls := 0
	op := func(context.Context) error { calls++; return errors.New("upstream down") }
	for _, id := range []string{"1", "2"} {
		if err := dlq.Do(ctx, r, q, dlq.Job{ID: id, Source: "llm-jobs"}, op); !errors.Is(err, dlq.ErrDeadLettered) {
			t.Fatalf("Do(job %s) = %v; want it dead-lettered", id, err)
		}
	}
	first, _ := q.Get(ctx, dlq.LetterID("llm-jobs", "1"))
	second, err := q.Get(ctx, dlq.LetterID("llm-jobs", "2"))
	if err != nil || calls != 1 || first.StopReason != "max-attempts" || second.StopReason != "breaker-open" || second.Attempts != 0 {
		t.Fatalf("after %d calls, letters stopped for %q and %q (%d attempts), %v; want 1 call, max-attempts, then breaker-open with none",
			calls, first.StopReason, second.StopReason, second.Attempts, err)
	}
	if ls, _ := q.List(ctx, dlq.Filter{StopReason: "breaker-open"}); len(ls) != 1 || ls[0].ID != second.ID {
		t.Fatalf("a filter by breaker-open selects %d letters; want the second", len(ls))
	}
}
