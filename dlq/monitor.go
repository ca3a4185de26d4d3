package dlq

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// alertGroups is how many root-cause groups a Monitor attaches to an alert.
const alertGroups = 5

// MonitorOptions configures a Monitor. Its zero value alerts at the default
// thresholds through slog.Default().
type MonitorOptions struct {
	// Thresholds says when to alert; the zero value is the default.
	Thresholds Thresholds
	// Hook, if set, receives every alert, firing and resolved. It is called
	// with the Monitor's lock held, one alert at a time, in order: it must
	// be quick and must not call the Monitor.
	Hook func(context.Context, Alert)
	// Logger receives every alert: WARN when firing, INFO when resolved.
	// nil means slog.Default(): a dead letter queue nobody hears about is
	// the trap this type exists to avoid. Pass a logger with a discarding
	// handler to silence it.
	Logger *slog.Logger
}

// Monitor is a Queue that watches the one it wraps: after every change
// (Put, Replay, Discard, Purge) it counts the letters and raises an alert
// when a threshold is crossed — once per crossing — to the hook and the
// logger. A firing alert carries the largest root-cause groups.
//
// Growth is measured from the Monitor's first observation: call Check once
// at start to take it. In a fleet sharing one queue, every process's
// Monitor sees its own changes; run Watch in one of them to see the
// others' too.
type Monitor struct {
	q    Queue
	hook func(context.Context, Alert)
	log  *slog.Logger

	mu sync.Mutex
	a  *Alerter
}

// NewMonitor returns a Monitor of q, or a *retry.InvalidError naming a bad
// option.
func NewMonitor(q Queue, o MonitorOptions) (*Monitor, error) {
	if q == nil {
		return nil, invalid("dlq.NewMonitor", nil, "the Queue must not be nil")
	}
	a, err := NewAlerter(o.Thresholds)
	if err != nil {
		return nil, err
	}
	m := &Monitor{q: q, hook: o.Hook, log: o.Logger, a: a}
	if m.log == nil {
		m.log = slog.Default()
	}
	return m, nil
}

// Put stores l in the wrapped queue, then checks the thresholds if l was
// stored.
func (m *Monitor) Put(ctx context.Context, l Letter) (bool, error) {
	stored, err := m.q.Put(ctx, l)
	if stored {
		m.check(ctx)
	}
	return stored, err
}

// Get returns the letter id of the wrapped queue.
func (m *Monitor) Get(ctx context.Context, id string) (Letter, error) { return m.q.Get(ctx, id) }

// List lists the wrapped queue's letters.
func (m *Monitor) List(ctx context.Context, f Filter) ([]Letter, error) { return m.q.List(ctx, f) }

// Count counts the wrapped queue's letters.
func (m *Monitor) Count(ctx context.Context, f Filter) (int, error) { return m.q.Count(ctx, f) }

// Replay replays the letter id of the wrapped queue, then checks the
// thresholds (an alert may resolve).
func (m *Monitor) Replay(ctx context.Context, id string, to Enqueuer) error {
	err := m.q.Replay(ctx, id, to)
	if err == nil {
		m.check(ctx)
	}
	return err
}

// Discard discards the letter id of the wrapped queue, then checks the
// thresholds.
func (m *Monitor) Discard(ctx context.Context, id string) error {
	err := m.q.Discard(ctx, id)
	if err == nil {
		m.check(ctx)
	}
	return err
}

// Purge purges the wrapped queue, then checks the thresholds.
func (m *Monitor) Purge(ctx context.Context, f Filter) (int, error) {
	n, err := m.q.Purge(ctx, f)
	if n > 0 {
		m.check(ctx)
	}
	return n, err
}

// check is Check for the queue's own methods, which must not fail because
// counting did: the failure is logged.
func (m *Monitor) check(ctx context.Context) {
	if err := m.Check(ctx); err != nil && ctx.Err() == nil {
		m.log.LogAttrs(ctx, slog.LevelWarn, "dead letter queue not counted for alerts", slog.Any("error", err))
	}
}

// Check counts the letters now and alerts if a threshold was crossed.
func (m *Monitor) Check(ctx context.Context) error { return m.CheckAt(ctx, time.Now()) }

// CheckAt counts the letters and alerts if a threshold was crossed, as
// observed at now: the explicit form of Check.
func (m *Monitor) CheckAt(ctx context.Context, now time.Time) error {
	n, err := m.q.Count(ctx, Filter{})
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.a.Observe(now, n) {
		if a.Firing {
			a.Groups = m.groups(ctx)
		}
		m.deliver(ctx, a)
	}
	return nil
}

// groups returns the largest root-cause groups, or none if listing fails:
// an alert without its groups beats no alert.
func (m *Monitor) groups(ctx context.Context) []Group {
	ls, err := m.q.List(ctx, Filter{})
	if err != nil {
		return nil
	}
	gs := GroupLetters(ls)
	return gs[:min(len(gs), alertGroups)]
}

func (m *Monitor) deliver(ctx context.Context, a Alert) {
	if m.hook != nil {
		m.hook(ctx, a)
	}
	level, msg := slog.LevelWarn, "dead letter queue alert"
	if !a.Firing {
		level, msg = slog.LevelInfo, "dead letter queue alert resolved"
	}
	if !m.log.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("alert", a.Kind.String()), slog.String("summary", a.String()),
		slog.Int("count", a.Count), slog.Int("growth", a.Growth),
		slog.Int("threshold", a.Threshold), slog.Duration("window", a.Window),
	}
	for i, g := range a.Groups {
		attrs = append(attrs, slog.Group("cause"+strconv.Itoa(i+1),
			slog.String("group", g.ID), slog.Int("count", g.Count), slog.String("signature", g.Signature)))
	}
	m.log.LogAttrs(ctx, level, msg, attrs...)
}

// Watch checks the queue every interval until ctx is done, and returns
// context.Cause(ctx). Counting errors are logged, not returned: a watcher
// outlives a Redis restart.
func (m *Monitor) Watch(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		return invalid("Monitor.Watch", every, "the interval must be positive")
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		m.check(ctx)
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}
