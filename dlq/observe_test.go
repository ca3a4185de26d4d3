package dlq_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/observe"
)

// TestTheObserverHearsEveryLetterReplayAndCount is what a metrics module
// relies on: one LetterAdded per letter stored (not per duplicate) with the
// letter, its policy.Stop and its classification; one QueueCounted per
// count; one LetterReplayed per replay with its outcome — in order with the
// alerts, which go to their own hook.
func TestTheObserverHearsEveryLetterReplayAndCount(t *testing.T) {
	ctx := context.Background()
	var events []string
	m, err := dlq.NewMonitor(memQueue(), dlq.MonitorConfig{
		Thresholds: dlq.Thresholds{Size: 1, Growth: dlq.Off},
		OnAlert: func(_ context.Context, a dlq.Alert) {
			events = append(events, fmt.Sprint("alert ", a.Kind, " ", a.Firing))
		},
		Observer: observe.Func(func(_ context.Context, e observe.Event) {
			switch e.Kind {
			case observe.LetterAdded:
				l := e.Detail.(dlq.Letter)
				events = append(events, fmt.Sprint("added ", l.Job.ID, " ", l.Group() == sample("x").Group(), " ", l.StopReason, " ", e.Stop, " ", e.Decision.Reason))
			case observe.LetterReplayed:
				events = append(events, fmt.Sprint("replayed ", e.Detail == dlq.LetterID("test", "a"), " ", e.Err))
			case observe.QueueCounted:
				events = append(events, fmt.Sprint("counted ", e.Detail))
			default:
				events = append(events, fmt.Sprint("unexpected ", e.Kind))
			}
		}),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := dlq.NewLetter(dlq.Job{ID: "c", Source: "test"}, errors.New("boom"), t0)
	m.Put(ctx, sample("a"))
	m.Put(ctx, sample("a")) // redelivered: no letter, no event
	m.Put(ctx, sample("b"))
	m.Put(ctx, plain)
	m.Replay(ctx, dlq.LetterID("test", "a"), dlq.EnqueueFunc(func(context.Context, dlq.Job) error { return nil }))
	m.Replay(ctx, dlq.LetterID("test", "a"), dlq.EnqueueFunc(func(context.Context, dlq.Job) error { return nil }))
	want := []string{
		"added a true max-attempts max-attempts unclassified", "counted 1",
		"added b true max-attempts max-attempts unclassified", "counted 2", "alert size true",
		"added c true failed continue unclassified", "counted 3",
		"replayed true <nil>", "counted 2",
		"replayed true dlq: letter " + dlq.LetterID("test", "a") + ": letter not found",
	}
	if !slices.Equal(events, want) {
		t.Fatalf("events:\n%q\nwant\n%q", events, want)
	}
}

// lapsing is a queue whose replays report ErrClaimLapsed for one letter.
type lapsing struct {
	dlq.Queue
	id string
}

func (q *lapsing) Replay(ctx context.Context, id string, to dlq.Enqueuer) error {
	if id == q.id {
		return fmt.Errorf("dlq: replay %s: the job was enqueued, but: %w", id, dlq.ErrClaimLapsed)
	}
	return q.Queue.Replay(ctx, id, to)
}

func TestReplayReportsALapsedClaimApart(t *testing.T) {
	ctx := context.Background()
	q := &lapsing{Queue: memQueue(), id: dlq.LetterID("test", "b")}
	for _, id := range []string{"a", "b", "c"} {
		q.Put(ctx, sample(id))
	}
	rep, err := dlq.Replay(ctx, q, dlq.Filter{}, dlq.EnqueueFunc(func(context.Context, dlq.Job) error { return nil }))
	if !errors.Is(err, dlq.ErrClaimLapsed) || !slices.Equal(rep.Lapsed, []string{q.id}) || len(rep.Replayed) != 2 || len(rep.Failed) != 0 {
		t.Fatalf("Replay = %+v, %v; want a and c replayed, b lapsed, and the error saying so", rep, err)
	}
}
