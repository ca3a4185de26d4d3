package dlq_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/observe"
)

// spy counts what a call reached: the job, the Enqueuer, a Claimer, the
// Monitor's observer and alert hook.
type spy struct{ ops, enqueues, claims, hooks int }

func (s *spy) op(context.Context) error { s.ops++; return errors.New("boom") }

func (s *spy) Enqueue(context.Context, dlq.Job) error { s.enqueues++; return nil }

func (s *spy) Claim(context.Context, string) (dlq.Claim, error) { s.claims++; return dlq.Claim{}, nil }
func (s *spy) Ack(context.Context, dlq.Claim) error             { s.claims++; return nil }
func (s *spy) Release(context.Context, dlq.Claim) error         { s.claims++; return nil }

func (s *spy) Observe(context.Context, observe.Event) { s.hooks++ }

func (s *spy) config() dlq.MonitorConfig {
	return dlq.MonitorConfig{
		Observer: s,
		OnAlert:  func(context.Context, dlq.Alert) { s.hooks++ },
		Logger:   slog.New(slog.DiscardHandler),
	}
}

// TestEveryCallRefusesNilAndZeroArguments walks the package's functions and
// methods with a nil or zero argument each: every one returns a
// *retry.InvalidError, and none ran the job, enqueued, claimed, called a
// hook or changed the queue. (The memory queue's methods are walked by the
// conformance suite's "invalid arguments" test.)
func TestEveryCallRefusesNilAndZeroArguments(t *testing.T) {
	ctx := context.Background()
	var nilCtx context.Context
	var zero dlq.Monitor
	r, _ := retry.New(retry.WithMaxAttempts(1))
	job := dlq.Job{ID: "7", Source: "llm-jobs"}
	l := sample("1")
	f := dlq.Filter{}
	tests := []struct {
		name string
		call func(*spy, dlq.Queue) error
	}{
		{"Record with a nil context", func(s *spy, q dlq.Queue) error { return dlq.Record(nilCtx, q, job, errBoom) }},
		{"Record to a nil queue", func(s *spy, q dlq.Queue) error { return dlq.Record(ctx, nil, job, errBoom) }},
		{"Do with a nil context", func(s *spy, q dlq.Queue) error { return dlq.Do(nilCtx, r, q, job, s.op) }},
		{"Do with a nil Retrier", func(s *spy, q dlq.Queue) error { return dlq.Do(ctx, nil, q, job, s.op) }},
		{"Do to a nil queue", func(s *spy, q dlq.Queue) error { return dlq.Do(ctx, r, nil, job, s.op) }},
		{"Do of a zero job", func(s *spy, q dlq.Queue) error { return dlq.Do(ctx, r, q, dlq.Job{}, s.op) }},
		{"Do of a job without a source", func(s *spy, q dlq.Queue) error { return dlq.Do(ctx, r, q, dlq.Job{ID: "7"}, s.op) }},
		{"Do of a nil operation", func(s *spy, q dlq.Queue) error { return dlq.Do(ctx, r, q, job, nil) }},
		{"Replay with a nil context", func(s *spy, q dlq.Queue) error { _, err := dlq.Replay(nilCtx, q, f, s); return err }},
		{"Replay of a nil queue", func(s *spy, q dlq.Queue) error { _, err := dlq.Replay(ctx, nil, f, s); return err }},
		{"Replay to a nil Enqueuer", func(s *spy, q dlq.Queue) error { _, err := dlq.Replay(ctx, q, f, nil); return err }},
		{"Replay to a nil EnqueueFunc", func(s *spy, q dlq.Queue) error { _, err := dlq.Replay(ctx, q, f, dlq.EnqueueFunc(nil)); return err }},
		{"Replay with a negative limit", func(s *spy, q dlq.Queue) error { _, err := dlq.Replay(ctx, q, dlq.Filter{Limit: -1}, s); return err }},
		{"ReplayClaimed of a nil Claimer", func(s *spy, q dlq.Queue) error { return dlq.ReplayClaimed(ctx, nil, l.ID, s) }},
		{"ReplayClaimed with a nil context", func(s *spy, q dlq.Queue) error { return dlq.ReplayClaimed(nilCtx, s, l.ID, s) }},
		{"ReplayClaimed of an empty id", func(s *spy, q dlq.Queue) error { return dlq.ReplayClaimed(ctx, s, "", s) }},
		{"ReplayClaimed to a nil Enqueuer", func(s *spy, q dlq.Queue) error { return dlq.ReplayClaimed(ctx, s, l.ID, nil) }},
		{"EnqueueFunc(nil).Enqueue", func(s *spy, q dlq.Queue) error { return dlq.EnqueueFunc(nil).Enqueue(ctx, job) }},
		{"EnqueueFunc.Enqueue with a nil context", func(s *spy, q dlq.Queue) error { return dlq.EnqueueFunc(s.Enqueue).Enqueue(nilCtx, job) }},
		{"Encode of the zero letter", func(s *spy, q dlq.Queue) error { _, err := dlq.Encode(dlq.Letter{}); return err }},
		{"Decode of nothing", func(s *spy, q dlq.Queue) error { _, err := dlq.Decode(nil); return err }},
		{"Filter.Validate of a negative limit", func(s *spy, q dlq.Queue) error { return dlq.Filter{Limit: -1}.Validate() }},
		{"NewMemory(-1)", func(s *spy, q dlq.Queue) error { _, err := dlq.NewMemory(-1); return err }},
		{"NewMonitor of a nil queue", func(s *spy, q dlq.Queue) error { _, err := dlq.NewMonitor(nil, s.config()); return err }},
		{"NewMonitor of a bad threshold", func(s *spy, q dlq.Queue) error {
			_, err := dlq.NewMonitor(q, dlq.MonitorConfig{Thresholds: dlq.Thresholds{Size: -2}, Observer: s})
			return err
		}},
		{"the zero Monitor's Put", func(s *spy, q dlq.Queue) error { _, err := zero.Put(ctx, l); return err }},
		{"the zero Monitor's Get", func(s *spy, q dlq.Queue) error { _, err := zero.Get(ctx, l.ID); return err }},
		{"the zero Monitor's List", func(s *spy, q dlq.Queue) error { _, err := zero.List(ctx, f); return err }},
		{"the zero Monitor's Count", func(s *spy, q dlq.Queue) error { _, err := zero.Count(ctx, f); return err }},
		{"the zero Monitor's Replay", func(s *spy, q dlq.Queue) error { return zero.Replay(ctx, l.ID, s) }},
		{"the zero Monitor's Discard", func(s *spy, q dlq.Queue) error { return zero.Discard(ctx, l.ID) }},
		{"the zero Monitor's Purge", func(s *spy, q dlq.Queue) error { _, err := zero.Purge(ctx, f); return err }},
		{"the zero Monitor's Check", func(s *spy, q dlq.Queue) error { return zero.Check(ctx) }},
		{"the zero Monitor's Watch", func(s *spy, q dlq.Queue) error { return zero.Watch(ctx, time.Minute) }},
		{"a nil Monitor's Watch", func(s *spy, q dlq.Queue) error { return (*dlq.Monitor)(nil).Watch(ctx, time.Minute) }},
		{"Monitor.Put with a nil context", func(s *spy, q dlq.Queue) error { _, err := q.Put(nilCtx, sample("2")); return err }},
		{"Monitor.Get with a nil context", func(s *spy, q dlq.Queue) error { _, err := q.Get(nilCtx, l.ID); return err }},
		{"Monitor.List with a nil context", func(s *spy, q dlq.Queue) error { _, err := q.List(nilCtx, f); return err }},
		{"Monitor.Count with a nil context", func(s *spy, q dlq.Queue) error { _, err := q.Count(nilCtx, f); return err }},
		{"Monitor.Replay with a nil context", func(s *spy, q dlq.Queue) error { return q.Replay(nilCtx, l.ID, s) }},
		{"Monitor.Replay of an empty id", func(s *spy, q dlq.Queue) error { return q.Replay(ctx, "", s) }},
		{"Monitor.Replay to a nil Enqueuer", func(s *spy, q dlq.Queue) error { return q.Replay(ctx, l.ID, nil) }},
		{"Monitor.Discard with a nil context", func(s *spy, q dlq.Queue) error { return q.Discard(nilCtx, l.ID) }},
		{"Monitor.Purge with a nil context", func(s *spy, q dlq.Queue) error { _, err := q.Purge(nilCtx, f); return err }},
		{"Monitor.Check with a nil context", func(s *spy, q dlq.Queue) error { return q.(*dlq.Monitor).Check(nilCtx) }},
		{"Monitor.Watch with a nil context", func(s *spy, q dlq.Queue) error { return q.(*dlq.Monitor).Watch(nilCtx, time.Minute) }},
		{"Monitor.Watch every 0", func(s *spy, q dlq.Queue) error { return q.(*dlq.Monitor).Watch(ctx, 0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused before any work", func(t *testing.T) {
			var s spy
			inner := memQueue()
			if _, err := inner.Put(ctx, l); err != nil {
				t.Fatal(err)
			}
			m, err := dlq.NewMonitor(inner, s.config())
			if err != nil {
				t.Fatal(err)
			}
			err = tt.call(&s, m)
			if !errors.Is(err, retry.ErrInvalid) {
				t.Fatalf("%s = %v; want retry.ErrInvalid", tt.name, err)
			}
			if s != (spy{}) {
				t.Fatalf("%s reached %+v; want nothing run, enqueued, claimed, observed or alerted", tt.name, s)
			}
			if ls, _ := inner.List(ctx, dlq.Filter{}); len(ls) != 1 || inner.Discard(ctx, l.ID) != nil {
				t.Fatalf("%s changed the queue: %d letters, or the letter is claimed", tt.name, len(ls))
			}
		})
	}
}

var errBoom = errors.New("boom")

func TestRecordOfInvalidArgumentsKeepsTheJobsError(t *testing.T) {
	err := dlq.Record(context.Background(), nil, dlq.Job{ID: "7", Source: "s"}, errBoom)
	if !errors.Is(err, retry.ErrInvalid) || !errors.Is(err, errBoom) || errors.Is(err, dlq.ErrDeadLettered) {
		t.Fatalf("Record(nil queue) = %v; want retry.ErrInvalid wrapping the job's error, and not dead-lettered", err)
	}
	if got, want := err.Error(), `dlq: job "7" not dead-lettered: dlq.Record(<nil>): the Queue must not be nil (job error: boom)`; got != want {
		t.Fatalf("Error = %q, want %q", got, want)
	}
}

// TestCallsWithoutAnErrorNeverPanicOnZeroArguments: what cannot return an
// error returns something harmless.
func TestCallsWithoutAnErrorNeverPanicOnZeroArguments(t *testing.T) {
	if l, ok := dlq.NewLetter(dlq.Job{}, nil, time.Time{}); ok || l.ID != "" {
		t.Fatalf("NewLetter of nothing = %+v, %v; want no letter", l, ok)
	}
	if _, ok := dlq.NewLetter(dlq.Job{}, errBoom, time.Time{}); !ok {
		t.Fatal("NewLetter of a zero job refused an error; the queue's Put refuses the letter")
	}
	if _, ok := dlq.NewLetter(dlq.Job{}, &retry.Error{}, time.Time{}); !ok {
		t.Fatal("NewLetter of a zero *retry.Error refused it; the queue's Put refuses the letter")
	}
	_ = dlq.GroupLetters(nil)
	_ = dlq.LetterID("", "")
	_ = dlq.Letter{}.Signature() + dlq.Letter{}.Group() + dlq.Alert{}.String()
	_ = dlq.Filter{}.Match(dlq.Letter{})
}

func TestANilObserverFuncIsNoObserver(t *testing.T) {
	m, err := dlq.NewMonitor(memQueue(), dlq.MonitorConfig{Observer: observe.Func(nil), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Put(context.Background(), sample("a")); err != nil {
		t.Fatal(err)
	}
}
