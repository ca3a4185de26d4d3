package dlq

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/observe"
)

// alertGroups is how many root-cause groups a Monitor attaches to an alert.
const alertGroups = 5

// MonitorConfig configures a Monitor. Its zero value alerts at the default
// thresholds through slog.Default(), and reports to no observer.
//
// The Observer and OnAlert are called synchronously, on the goroutine of
// the call that caused them (Watch's, for what Watch finds); they must be
// quick, and must not call the Monitor. The events of a count
// (observe.QueueCounted) and the alerts it raises are delivered in order,
// one at a time.
type MonitorConfig struct {
	// Thresholds says when to alert; the zero value is the default.
	Thresholds Thresholds
	// Observer, if set, hears of what happens to the queue through the
	// Monitor — what a metrics or tracing module follows (package
	// otelretry implements it):
	//
	//   - observe.LetterAdded after the Monitor stored a letter. Detail is
	//     the Letter (its Job.Source, Group() and StopReason are what a
	//     count of letters is split by), Stop the policy.Stop its stop
	//     reason names (policy.Continue for "failed"), Decision its last
	//     failure's classification (Decision.Reason: its class). A
	//     duplicate is no letter added: a redelivered job is one letter.
	//   - observe.LetterReplayed after each replay through the Monitor
	//     (Monitor.Replay, and so each letter of Replay). Detail is the
	//     letter's id (a string); Err is nil when the job was enqueued and
	//     the letter left, and otherwise why it stayed: an error matching
	//     ErrNotFound or ErrClaimed when another replay had it,
	//     ErrClaimLapsed when its claim lapsed, or the enqueue's or the
	//     queue's failure.
	//   - observe.QueueCounted each time the Monitor counts the letters:
	//     after each change through it, each Check and each tick of Watch.
	//     Detail is the count (an int): the depth a gauge reports.
	//
	// Alerts are not observations: they go to OnAlert and the Logger.
	Observer observe.Observer
	// OnAlert, if set, receives every alert, firing and resolved.
	OnAlert func(ctx context.Context, a Alert)
	// Logger receives every alert: WARN when firing, INFO when resolved.
	// nil means slog.Default(): a dead letter queue nobody hears about is
	// the trap this type exists to avoid. Pass a logger with a discarding
	// handler to silence it.
	Logger *slog.Logger
}

// Monitor is a Queue that watches the one it wraps: after every change
// (Put, Replay, Discard, Purge) it counts the letters and raises an alert
// when a threshold is crossed — once per crossing — to OnAlert and the
// logger. A firing alert carries the largest root-cause groups. Its
// observer hears of each letter stored, each replay and each count (see
// MonitorConfig).
//
// Growth is measured from the Monitor's first observation: call Check once
// at start to take it. In a fleet sharing one queue, every process's
// Monitor sees its own changes; run Watch in one of them to see the
// others' too.
//
// A Monitor is made by NewMonitor; every method of the zero Monitor returns
// a *retry.InvalidError.
type Monitor struct {
	q   Queue
	c   MonitorConfig
	obs observe.Observer // c.Observer; nil: none

	counts  atomic.Uint64 // counts started, numbering them
	mu      sync.Mutex
	a       *alerter
	applied uint64 // the number of the latest count observed
}

// NewMonitor returns a Monitor of q, or a *retry.InvalidError naming a bad
// field of c.
func NewMonitor(q Queue, c MonitorConfig) (*Monitor, error) {
	if q == nil {
		return nil, argerr.New("dlq.NewMonitor", nil, "the Queue must not be nil")
	}
	a, err := newAlerter(c.Thresholds)
	if err != nil {
		return nil, err
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	m := &Monitor{q: q, c: c, a: a, obs: c.Observer}
	if f, ok := m.obs.(observe.Func); ok && f == nil {
		m.obs = nil
	}
	return m, nil
}

// observe hands e to the observer, if there is one.
func (m *Monitor) observe(ctx context.Context, e observe.Event) {
	if m.obs != nil {
		m.obs.Observe(ctx, e)
	}
}

// check refuses a Monitor not made by NewMonitor, and a nil context.
func (m *Monitor) check(method string, ctx context.Context) error {
	return checkCall("dlq.Monitor."+method, m != nil && m.q != nil, ctx)
}

// Put stores l in the wrapped queue, then, if l was stored, tells the
// observer (observe.LetterAdded) and checks the thresholds.
func (m *Monitor) Put(ctx context.Context, l Letter) (bool, error) {
	if err := m.check("Put", ctx); err != nil {
		return false, err
	}
	stored, err := m.q.Put(ctx, l)
	if stored {
		m.observe(ctx, observe.Event{Kind: observe.LetterAdded, Detail: l, Stop: stopOf(l.StopReason), Decision: l.Last.Decision})
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

// Replay replays the letter id of the wrapped queue, tells the observer
// (observe.LetterReplayed), and checks the thresholds (an alert may
// resolve).
func (m *Monitor) Replay(ctx context.Context, id string, to Enqueuer) error {
	if err := m.check("Replay", ctx); err != nil {
		return err
	}
	if err := checkReplay("dlq.Monitor.Replay", ctx, id, to); err != nil {
		return err
	}
	err := m.q.Replay(ctx, id, to)
	m.observe(ctx, observe.Event{Kind: observe.LetterReplayed, Detail: id, Err: err})
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
		m.c.Logger.LogAttrs(ctx, slog.LevelWarn, "dead letter queue not counted for alerts", slog.Any("error", err))
	}
}

// Check counts the letters, tells the observer (observe.QueueCounted), and
// alerts if a threshold was crossed.
func (m *Monitor) Check(ctx context.Context) error {
	if err := m.check("Check", ctx); err != nil {
		return err
	}
	// Counts are numbered as they start, and one that answers after a later
	// one was observed is dropped: observed late, a stale count would make an
	// alert fire, resolve and fire again as concurrent letters arrive. The
	// count itself runs outside the lock, so a slow queue stalls no one.
	now, seq := time.Now(), m.counts.Add(1)
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
	m.observe(ctx, observe.Event{Kind: observe.QueueCounted, Detail: n})
	for _, a := range m.a.observe(now, n) {
		if a.Firing {
			a.Groups = m.groups(ctx)
		}
		m.deliver(ctx, a)
	}
	return nil
}

// groups returns the largest root-cause groups, added up by the queue if
// it can (Summarize), or none if that fails: an alert without its groups
// beats no alert.
func (m *Monitor) groups(ctx context.Context) []Group {
	s, err := Summarize(ctx, m.q, Filter{})
	if err != nil {
		return nil
	}
	return s.Groups[:min(len(s.Groups), alertGroups)]
}

func (m *Monitor) deliver(ctx context.Context, a Alert) {
	if m.c.OnAlert != nil {
		m.c.OnAlert(ctx, a)
	}
	level, msg := slog.LevelWarn, "dead letter queue alert"
	if !a.Firing {
		level, msg = slog.LevelInfo, "dead letter queue alert resolved"
	}
	if !m.c.Logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("alert", a.Kind), slog.String("summary", a.String()),
		slog.Int("count", a.Count), slog.Int("growth", a.Growth),
		slog.Int("threshold", a.Threshold), slog.Duration("window", a.Window),
	}
	for i, g := range a.Groups {
		attrs = append(attrs, slog.Group("cause"+strconv.Itoa(i+1),
			slog.String("group", g.ID), slog.Int("count", g.Count), slog.String("signature", g.Signature)))
	}
	m.c.Logger.LogAttrs(ctx, level, msg, attrs...)
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
