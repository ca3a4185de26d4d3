package dlq_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"github.com/retrykit/retry/dlq"
)

// TestMonitorHooksSeeEveryLetterReplayAndCount is what a metrics module
// relies on: one OnRecord per letter stored (not per duplicate) with its
// source and group, one OnDepth per count, one OnReplay per replay with
// its outcome.
func TestMonitorHooksSeeEveryLetterReplayAndCount(t *testing.T) {
	ctx := context.Background()
	var events []string
	m, err := dlq.NewMonitor(new(dlq.Memory), dlq.MonitorOptions{
		Thresholds: dlq.Thresholds{Size: 1, Growth: dlq.Off},
		OnAlert: func(_ context.Context, a dlq.Alert) {
			events = append(events, fmt.Sprint("alert ", a.Kind, " ", a.Firing))
		},
		OnRecord: func(_ context.Context, l dlq.Letter) {
			events = append(events, fmt.Sprint("record ", l.Job.Source, " ", l.Group() == sample("x").Group(), " ", l.StopReason))
		},
		OnReplay: func(_ context.Context, id string, err error) {
			events = append(events, fmt.Sprint("replay ", id == dlq.LetterID("test", "a"), " ", err))
		},
		OnDepth: func(_ context.Context, n int) { events = append(events, fmt.Sprint("depth ", n)) },
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	m.Put(ctx, sample("a"))
	m.Put(ctx, sample("a")) // redelivered: no letter, no event
	m.Put(ctx, sample("b"))
	m.Replay(ctx, dlq.LetterID("test", "a"), dlq.EnqueueFunc(func(context.Context, dlq.Job) error { return nil }))
	m.Replay(ctx, dlq.LetterID("test", "a"), dlq.EnqueueFunc(func(context.Context, dlq.Job) error { return nil }))
	want := []string{
		"record test true max-attempts", "depth 1",
		"record test true max-attempts", "depth 2", "alert size true",
		"replay true <nil>", "depth 1", "alert size false",
		"replay true dlq: letter " + dlq.LetterID("test", "a") + ": letter not found",
	}
	if !slices.Equal(events, want) {
		t.Fatalf("events:\n%q\nwant\n%q", events, want)
	}
}

// lapsing is a queue whose replays report ErrClaimLapsed for one letter.
type lapsing struct {
	dlq.Memory
	id string
}

func (q *lapsing) Replay(ctx context.Context, id string, to dlq.Enqueuer) error {
	if id == q.id {
		return fmt.Errorf("dlq: replay %s: the job was enqueued, but: %w", id, dlq.ErrClaimLapsed)
	}
	return q.Memory.Replay(ctx, id, to)
}

func TestReplayReportsALapsedClaimApart(t *testing.T) {
	ctx := context.Background()
	q := &lapsing{id: dlq.LetterID("test", "b")}
	for _, id := range []string{"a", "b", "c"} {
		q.Put(ctx, sample(id))
	}
	rep, err := dlq.Replay(ctx, q, dlq.Filter{}, dlq.EnqueueFunc(func(context.Context, dlq.Job) error { return nil }))
	if !errors.Is(err, dlq.ErrClaimLapsed) || !slices.Equal(rep.Lapsed, []string{q.id}) || len(rep.Replayed) != 2 || len(rep.Failed) != 0 {
		t.Fatalf("Replay = %+v, %v; want a and c replayed, b lapsed, and the error saying so", rep, err)
	}
}
