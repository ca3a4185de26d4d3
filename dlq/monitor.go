package dlq

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry/internal/argerr"
)

// alertGroups is how many root-cause groups a Monitor attaches to an alert.
const alertGroups = 5

// MonitorOptions configures a Monitor. Its zero value alerts at the default
// thresholds through slog.Default(), and calls no hook.
//
// The On… hooks are how an observer — metrics, traces, a pager — follows the
// queue without this package knowing it: they are called synchronously, on
// the goroutine of the call that caused them, and must be quick and must not
// call the Monitor. OnAlert and OnDepth are called in order, one at a time.
type MonitorOptions struct {
	// Thresholds says when to alert; the zero value is the default.
	Thresholds Thresholds
	// OnAlert, if set, receives every alert, firing and resolved.
	OnAlert func(ctx context.Context, a Alert)
	// OnRecord, if set, is called after the Monitor stored a letter, with
	// it: its Job.Source, Group() (the root cause), StopReason and class
	// (Last.Decision.Reason) are what a count of letters recorded is split
	// by. It is not called for a duplicate: a redelivered job is one letter.
	OnRecord func(ctx context.Context, l Letter)
	// OnReplay, if set, is called after each replay through the Monitor
	// (Monitor.Replay, and so each letter of dlq.Replay), with the letter's
	// id and the outcome: nil when the job was enqueued and the letter left;
	// an error matching ErrNotFound or ErrClaimed when another replay had
	// it, ErrClaimLapsed when its claim lapsed, or else why it stayed.
	OnReplay func(ctx context.Context, id string, err error)
	// OnDepth, if set, is called with the number of letters in the queue
	// each time the Monitor counts them: after each change through it, each
	// Check and each tick of Watch — the depth a gauge reports.
	OnDepth func(ctx context.Context, letters int)
	// Logger receives every alert: WARN when firing, INFO when resolved.
	// nil means slog.Default(): a dead letter queue nobody hears about is
	// the trap this type exists to avoid. Pass a logger with a discarding
	// handler to silence it.
	Logger *slog.Logger
}

// Monitor is a Queue that watches the one it wraps: after every change
// (Put, Replay, Discard, Purge) it counts the letters and raises an alert
// when a threshold is crossed — once per crossing — to the OnAlert hook and
// the logger. A firing alert carries the largest root-cause groups. Its
// other hooks report each letter stored, each replay and each count (see
// MonitorOptions).
//
// Growth is measured from the Monitor's first observation: call Check once
// at start to take it. In a fleet sharing one queue, every process's
// Monitor sees its own changes; run Watch in one of them to see the
// others' too.
//
// A Monitor is made by NewMonitor; every method of the zero Monitor returns
// a *retry.InvalidError.
type Monitor struct {
	q Queue
	o MonitorOptions

	counts  atomic.Uint64 // counts started, numbering them
	mu      sync.Mutex
	a       *Alerter
	applied uint64 // the number of the latest count observed
}

// NewMonitor returns a Monitor of q, or a *retry.InvalidError naming a bad
// option.
func NewMonitor(q Queue, o MonitorOptions) (*Monitor, error) {
	if q == nil {
		return nil, argerr.New("dlq.NewMonitor", nil, "the Queue must not be nil")
	}
	a, err := NewAlerter(o.Thresholds)
	if err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Monitor{q: q, o: o, a: a}, nil
}

// check refuses a Monitor not made by NewMonitor, and a nil context.
func (m *Monitor) check(method string, ctx context.Context) error {
	return CheckCall("dlq.Monitor."+method, m != nil && m.q != nil, ctx)
}

// Put stores l in the wrapped queue, then, if l was stored, calls OnRecord
// and checks the thresholds.
func (m *Monitor) Put(ctx context.Context, l Letter) (bool, error) {
	if err := m.check("Put", ctx); err != nil {
		return false, err
	}
	stored, err := m.q.Put(ctx, l)
	if stored {
		if m.o.OnRecord != nil {
			m.o.OnRecord(ctx, l)
		}
		m.recount(ctx)
	}
	return stored, err
}

// Get returns the letter id of the wrapped queue.
func (m *Monitor) Get(ctx context.Context, id string) (Letter, error) {
	if err := m.check("Get", ctx); err != nil {
		return Letter{}, err
	}
	return m.q.Get(ctx, id)
}

// List lists the wrapped queue's letters.
func (m *Monitor) List(ctx context.Context, f Filter) ([]Letter, error) {
	if err := m.check("List", ctx); err != nil {
		return nil, err
	}
	return m.q.List(ctx, f)
}

// Count counts the wrapped queue's letters.
func (m *Monitor) Count(ctx context.Context, f Filter) (int, error) {
	if err := m.check("Count", ctx); err != nil {
		return 0, err
	}
	return m.q.Count(ctx, f)
}

// Replay replays the letter id of the wrapped queue, calls OnReplay, and
// checks the thresholds (an alert may resolve).
func (m *Monitor) Replay(ctx context.Context, id string, to Enqueuer) error {
	if err := m.check("Replay", ctx); err != nil {
		return err
	}
	if err := checkReplay("dlq.Monitor.Replay", ctx, id, to); err != nil {
		return err
	}
	err := m.q.Replay(ctx, id, to)
	if m.o.OnReplay != nil {
		m.o.OnReplay(ctx, id, err)
	}
	if err == nil {
		m.recount(ctx)
	}
	return err
}

// Discard discards the letter id of the wrapped queue, then checks the
// thresholds.
func (m *Monitor) Discard(ctx context.Context, id string) error {
	if err := m.check("Discard", ctx); err != nil {
		return err
	}
	err := m.q.Discard(ctx, id)
	if err == nil {
		m.recount(ctx)
	}
	return err
}

// Purge purges the wrapped queue, then checks the thresholds.
func (m *Monitor) Purge(ctx context.Context, f Filter) (int, error) {
	if err := m.check("Purge", ctx); err != nil {
		return 0, err
	}
	n, err := m.q.Purge(ctx, f)
	if n > 0 {
		m.recount(ctx)
	}
	return n, err
}

// recount is Check for the queue's own methods, which must not fail because
// counting did: the failure is logged.
func (m *Monitor) recount(ctx context.Context) {
	if err := m.Check(ctx); err != nil && ctx.Err() == nil {
		m.o.Logger.LogAttrs(ctx, slog.LevelWarn, "dead letter queue not counted for alerts", slog.Any("error", err))
	}
}

// Check counts the letters now and alerts if a threshold was crossed.
func (m *Monitor) Check(ctx context.Context) error { return m.CheckAt(ctx, time.Now()) }

// CheckAt counts the letters and alerts if a threshold was crossed, as
// observed at now: the explicit form of Check. A zero now is a
// *retry.InvalidError.
func (m *Monitor) CheckAt(ctx context.Context, now time.Time) error {
	if err := m.check("CheckAt", ctx); err != nil {
		return err
	}
	if now.IsZero() {
		return argerr.New("dlq.Monitor.CheckAt", now, "the time must be set")
	}
	// Counts are numbered as they start, and one that answers after a later
	// one was observed is dropped: observed late, a stale count would make an
	// alert fire, resolve and fire again as concurrent letters arrive. The
	// count itself runs outside the lock, so a slow queue stalls no one.
	seq := m.counts.Add(1)
	n, err := m.q.Count(ctx, Filter{})
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if seq < m.applied {
		return nil
	}
	m.applied = seq
	if m.o.OnDepth != nil {
		m.o.OnDepth(ctx, n)
	}
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
	if m.o.OnAlert != nil {
		m.o.OnAlert(ctx, a)
	}
	level, msg := slog.LevelWarn, "dead letter queue alert"
	if !a.Firing {
		level, msg = slog.LevelInfo, "dead letter queue alert resolved"
	}
	if !m.o.Logger.Enabled(ctx, level) {
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
	m.o.Logger.LogAttrs(ctx, level, msg, attrs...)
}

// Watch checks the queue every interval until ctx is done, and returns
// context.Cause(ctx). Counting errors are logged, not returned: a watcher
// outlives a Redis restart.
func (m *Monitor) Watch(ctx context.Context, every time.Duration) error {
	if err := m.check("Watch", ctx); err != nil {
		return err
	}
	if every <= 0 {
		return argerr.New("dlq.Monitor.Watch", every, "the interval must be positive")
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		m.recount(ctx)
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}
