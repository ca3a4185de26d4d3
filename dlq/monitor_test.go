package dlq_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/dlq"
)

// logTo returns a logger writing text without timestamps to buf.
func logTo(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
}

func TestMonitorAlertsOncePerCrossingOnTheFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log bytes.Buffer
		var alerts []dlq.Alert
		m, err := dlq.NewMonitor(memQueue(), dlq.MonitorConfig{
			OnAlert: func(_ context.Context, a dlq.Alert) { alerts = append(alerts, a) },
			Logger:  logTo(&log),
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for i := range 30 { // a letter every 10 minutes: 6 an hour, 30 in all
			time.Sleep(10 * time.Minute)
			if _, err := m.Put(ctx, sample(fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
		if len(alerts) != 1 || alerts[0].Kind != "size" || !alerts[0].Firing || alerts[0].Count != 11 {
			t.Fatalf("alerts = %+v; want only the size alert, at the 11th letter", alerts)
		}
		if !alerts[0].At.Equal(time.Now().Add(-190*time.Minute)) || len(alerts[0].Groups) != 1 || alerts[0].Groups[0].Count != 11 {
			t.Fatalf("alert = %+v; want it at the 11th letter's time, with its one root cause", alerts[0])
		}
		for i := range 30 {
			if err := m.Discard(ctx, dlq.LetterID("test", fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
		if len(alerts) != 2 || alerts[1].Firing || alerts[1].Count != 10 {
			t.Fatalf("alerts = %+v; want a resolution when back at 10", alerts)
		}
		want := []string{
			`level=WARN msg="dead letter queue alert" alert=size summary="dead letter queue holds 11 letters (more than 10)" count=11 growth=6 threshold=10 window=1h0m0s cause1.group=`,
			`level=INFO msg="dead letter queue alert resolved" alert=size summary="dead letter queue back to 10 letters (at most 10)" count=10`,
		}
		lines := strings.Split(strings.TrimSpace(log.String()), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], want[0]) || !strings.HasPrefix(lines[1], want[1]) {
			t.Fatalf("log:\n%s\nwant lines starting\n%s", log.String(), strings.Join(want, "\n"))
		}
	})
}

func TestMonitorGrowthAlertOnTheFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var alerts []string
		m, _ := dlq.NewMonitor(memQueue(), dlq.MonitorConfig{
			Thresholds: dlq.Thresholds{Size: dlq.Off, Growth: 5, Window: 10 * time.Minute},
			OnAlert:    func(_ context.Context, a dlq.Alert) { alerts = append(alerts, fmt.Sprint(a.Kind, " ", a.Firing)) },
			Logger:     slog.New(slog.DiscardHandler),
		})
		for i := range 12 { // a burst: one a second
			time.Sleep(time.Second)
			m.Put(context.Background(), sample(fmt.Sprint(i)))
		}
		time.Sleep(11 * time.Minute)
		if err := m.Check(context.Background()); err != nil {
			t.Fatal(err)
		}
		if want := []string{"growth true", "growth false"}; fmt.Sprint(alerts) != fmt.Sprint(want) {
			t.Fatalf("alerts %v, want %v", alerts, want)
		}
	})
}

func TestWatchSeesLettersOtherProcessesPut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := memQueue()    // as a Redis queue is shared by a fleet
		var alerts atomic.Int32 // the hook runs on Watch's goroutine
		m, _ := dlq.NewMonitor(shared, dlq.MonitorConfig{
			Thresholds: dlq.Thresholds{Size: 2, Growth: dlq.Off},
			OnAlert:    func(context.Context, dlq.Alert) { alerts.Add(1) },
			Logger:     slog.New(slog.DiscardHandler),
		})
		ctx, cancel := context.WithCancelCause(context.Background())
		done := make(chan error)
		go func() { done <- m.Watch(ctx, time.Minute) }()
		synctest.Wait() // Watch checked at once, and found nothing
		for i := range 3 {
			shared.Put(context.Background(), sample(fmt.Sprint(i))) // not through m
		}
		synctest.Wait()
		if n := alerts.Load(); n != 0 {
			t.Fatalf("%d alerts before the next tick", n)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := alerts.Load(); n != 1 {
			t.Fatalf("%d alerts after a tick, want 1", n)
		}
		stop := errors.New("stop")
		cancel(stop)
		if err := <-done; err != stop {
			t.Fatalf("Watch = %v, want the context's cause", err)
		}
	})
}

// failing is a Queue whose Count fails.
type failing struct{ dlq.Queue }

func (*failing) Count(context.Context, dlq.Filter) (int, error) { return 0, errors.New("redis down") }

func TestMonitorLogsWhenItCannotCount(t *testing.T) {
	var log bytes.Buffer
	m, _ := dlq.NewMonitor(&failing{memQueue()}, dlq.MonitorConfig{Logger: logTo(&log)})
	if stored, err := m.Put(context.Background(), sample("a")); !stored || err != nil {
		t.Fatalf("Put = %v, %v; a counting failure must not fail it", stored, err)
	}
	if !strings.Contains(log.String(), `level=WARN msg="dead letter queue not counted for alerts" error="redis down"`) {
		t.Fatalf("log = %q", log.String())
	}
}

func TestNewMonitorValidates(t *testing.T) {
	tests := []struct {
		name  string
		q     dlq.Queue
		c     dlq.MonitorConfig
		field string
	}{
		{"a nil queue", nil, dlq.MonitorConfig{}, "dlq.NewMonitor"},
		{"a bad threshold", memQueue(), dlq.MonitorConfig{Thresholds: dlq.Thresholds{Size: -3}}, "dlq.Thresholds.Size"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			_, err := dlq.NewMonitor(tt.q, tt.c)
			var inv *retry.InvalidError
			if !errors.As(err, &inv) || inv.Name != tt.field {
				t.Fatalf("NewMonitor = %v; want an *InvalidError naming %s", err, tt.field)
			}
		})
	}
	m, _ := dlq.NewMonitor(memQueue(), dlq.MonitorConfig{})
	if err := m.Watch(context.Background(), 0); !errors.Is(err, retry.ErrInvalid) {
		t.Fatalf("Watch(0) = %v; want retry.ErrInvalid", err)
	}
}

// staleCount is a queue whose first Count reads the number of letters, then
// takes a second to answer: a slow count, overtaken by a later one.
type staleCount struct {
	dlq.Queue
	calls atomic.Int32
}

func (q *staleCount) Count(ctx context.Context, f dlq.Filter) (int, error) {
	n, err := q.Queue.Count(ctx, f)
	if q.calls.Add(1) == 1 {
		time.Sleep(time.Second)
	}
	return n, err
}

func TestConcurrentLettersDoNotMakeTheAlertFlap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &staleCount{Queue: memQueue()}
		var alerts []string
		m, err := dlq.NewMonitor(q, dlq.MonitorConfig{
			Thresholds: dlq.Thresholds{Size: 3, Growth: dlq.Off},
			OnAlert:    func(_ context.Context, a dlq.Alert) { alerts = append(alerts, fmt.Sprint(a.Firing, a.Count)) },
			Logger:     slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for i := range 2 {
			if _, err := q.Queue.Put(ctx, sample(fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
		go func() { _, _ = m.Put(ctx, sample("3rd")) }() // counts 3, slowly
		synctest.Wait()
		_, err = m.Put(ctx, sample("4th")) // counts 4 while the 3rd's count is on its way
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // the slow count answers
		if len(alerts) != 1 || alerts[0] != "true 4" {
			t.Fatalf("alerts = %v; want one, firing at 4 letters — a stale count must not resolve it", alerts)
		}
	})
}
