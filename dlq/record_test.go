package dlq_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/policy"
)

func TestRecord(t *testing.T) {
	job := dlq.Job{ID: "7", Source: "llm-jobs"}
	tests := []struct {
		name        string
		err         error
		wantDead    bool
		wantSame    bool // err comes back unchanged
		wantLetters int
	}{
		{"a nil error is no letter", nil, false, true, 0},
		{"an exhausted loop is dead-lettered", exhausted(3, syscall.ECONNRESET), true, false, 1},
		{"a plain error is dead-lettered", &classify.StatusError{Code: http.StatusBadRequest}, true, false, 1},
		{"a cancelled loop is returned unchanged for redelivery", &retry.Error{Stop: policy.StopCanceled, Reason: context.Canceled, Last: syscall.ECONNRESET}, false, true, 0},
		{"a refused loop is dead-lettered", &retry.Error{Stop: policy.StopLimited, Reason: retry.ErrLimited}, true, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := memQueue()
			err := dlq.Record(context.Background(), q, job, tt.err)
			if got := errors.Is(err, dlq.ErrDeadLettered); got != tt.wantDead {
				t.Fatalf("Record = %v; dead-lettered %v, want %v", err, got, tt.wantDead)
			}
			if tt.wantSame && err != tt.err {
				t.Fatalf("Record = %v; want %v unchanged", err, tt.err)
			}
			if tt.wantDead && (!strings.Contains(err.Error(), dlq.LetterID("llm-jobs", "7")) || !errors.Is(err, tt.err)) {
				t.Fatalf("Record = %v; want the letter id and the job's error inside", err)
			}
			if n, _ := q.Count(context.Background(), dlq.Filter{}); n != tt.wantLetters {
				t.Fatalf("%d letters, want %d", n, tt.wantLetters)
			}
		})
	}
}

func TestRecordThatCannotStoreSaysSoAndKeepsBothErrors(t *testing.T) {
	q, _ := dlq.NewMemory(1)
	ctx := context.Background()
	dlq.Record(ctx, q, dlq.Job{ID: "1", Source: "s"}, exhausted(1, syscall.ECONNRESET))
	err := dlq.Record(ctx, q, dlq.Job{ID: "2", Source: "s"}, exhausted(1, syscall.ECONNRESET))
	if errors.Is(err, dlq.ErrDeadLettered) || !errors.Is(err, dlq.ErrFull) || !errors.Is(err, retry.ErrExhausted) {
		t.Fatalf("Record into a full queue = %v; want it not dead-lettered, ErrFull and the retry error", err)
	}
	err = dlq.Record(ctx, q, dlq.Job{Source: "s"}, exhausted(1, syscall.ECONNRESET))
	if errors.Is(err, dlq.ErrDeadLettered) || !errors.Is(err, retry.ErrInvalid) {
		t.Fatalf("Record of a job without an id = %v; want retry.ErrInvalid", err)
	}
}

func TestRecordSaysWhatHappened(t *testing.T) {
	q := memQueue()
	e := exhausted(1, errors.New("boom"))
	e.Stop = policy.StopBudget
	id := dlq.LetterID("s", "7")
	for _, want := range []string{
		`dlq: job "7" dead-lettered as ` + id + ` (budget): ` + e.Error(),
		`dlq: job "7" already dead-lettered as ` + id + ` (budget): ` + e.Error(),
	} {
		if got := dlq.Record(context.Background(), q, dlq.Job{ID: "7", Source: "s"}, e).Error(); got != want {
			t.Fatalf("Error = %q, want %q", got, want)
		}
	}
}

func TestDoRefusesARetrierThatCannotRunAndStoresNothing(t *testing.T) {
	bad, _ := retry.New(retry.WithMaxAttempts(0)) // nil today; a Retrier that refuses every call tomorrow
	for name, r := range map[string]*retry.Retrier{"a nil Retrier": nil, "a Retrier with a bad option": bad} {
		t.Run(name, func(t *testing.T) {
			q := memQueue()
			calls := 0
			err := dlq.Do(context.Background(), r, q, dlq.Job{ID: "1", Source: "s"}, func(context.Context) error {
				calls++
				return nil
			})
			if !errors.Is(err, retry.ErrInvalid) || errors.Is(err, dlq.ErrDeadLettered) || calls != 0 {
				t.Fatalf("Do = %v after %d calls; want retry.ErrInvalid, no call, no letter", err, calls)
			}
			if n, _ := q.Count(context.Background(), dlq.Filter{}); n != 0 {
				t.Fatalf("%d letters; want none", n)
			}
		})
	}
}

func TestDoWithTheDefaultRetrier(t *testing.T) {
	r, _ := retry.New()
	calls := 0
	err := dlq.Do(context.Background(), r, memQueue(), dlq.Job{ID: "1", Source: "s"}, func(context.Context) error {
		calls++
		return classify.Permanent(errors.New("validation failed"))
	})
	var rerr *retry.Error
	if !errors.Is(err, dlq.ErrDeadLettered) || !errors.As(err, &rerr) || rerr.Stop != policy.StopPermanent || calls != 1 {
		t.Fatalf("Do = %v after %d calls; want one call, dead-lettered as permanent", err, calls)
	}
}

func TestFirstFailureIsWhenTheLoopSawIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, err := dlq.NewMemory(10)
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		r, err := retry.New(retry.WithBackoff(backoff.Constant(time.Second)), retry.WithMaxAttempts(3))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = dlq.Do(t.Context(), r, q, dlq.Job{ID: "j1", Source: "jobs"}, func(context.Context) error {
			calls++
			time.Sleep(time.Minute) // a slow first attempt: the loop's Elapsed does not see it
			return syscall.ECONNRESET
		})
		if !errors.Is(err, dlq.ErrDeadLettered) {
			t.Fatalf("got %v, want it dead-lettered", err)
		}
		l, err := q.Get(t.Context(), dlq.LetterID("jobs", "j1"))
		if err != nil {
			t.Fatal(err)
		}
		// The first attempt ended, and failed, a minute in; Elapsed does not see it.
		if want := start.Add(time.Minute).UTC(); !l.FirstFailure.Equal(want) || calls != 3 {
			t.Errorf("FirstFailure = %v after %d calls, want %v after 3", l.FirstFailure, calls, want)
		}
	})
}
