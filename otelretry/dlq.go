package otelretry

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/retrykit/retry/dlq"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Attribute keys of the dead letter queue metrics.
const (
	KeyQueue        = attribute.Key("retry.dlq.name")        // the name given to NewQueue
	KeySource       = attribute.Key("retry.dlq.source")      // a letter's Job.Source (capped)
	KeyGroup        = attribute.Key("retry.dlq.group")       // a letter's root-cause group (capped)
	KeyStopReason   = attribute.Key("retry.dlq.stop_reason") // a dlq.StopReason, or "other"
	KeyReplayResult = attribute.Key("retry.dlq.replay.result")
)

// MaxDistinct bounds the pairs of values a Queue takes from its letters
// (source, root-cause group): the first MaxDistinct pairs seen get their own
// series, later ones are reported with both values "other". Sources are named
// by configuration, but groups are hashes of error messages, which a
// dependency can vary without end.
const MaxDistinct = 100

// Replay results: the values of KeyReplayResult.
const (
	ReplayDone        = "replayed"     // the job was enqueued and the letter left
	ReplayNotFound    = "not_found"    // another replay had it (dlq.ErrNotFound)
	ReplayClaimed     = "claimed"      // another replay is in progress (dlq.ErrClaimed)
	ReplayClaimLapsed = "claim_lapsed" // dlq.ErrClaimLapsed
	ReplayFailed      = "failed"       // the letter stayed: the enqueue or the store failed
)

var stopReasons = []dlq.StopReason{dlq.StopMaxAttempts, dlq.StopElapsed, dlq.StopDeadline, dlq.StopBudget,
	dlq.StopPermanent, dlq.StopNotIdempotent, dlq.StopClassLimit, dlq.StopWaitTooLong, dlq.StopKeyRequired, dlq.StopFailed}

// Queue observes a dead letter queue through a dlq.Monitor's hooks (Hooks
// fills them in). It reports:
//
//   - retry.dlq.letters: letters recorded, by source, root-cause group, stop
//     reason and class (the last failure's classification reason);
//   - retry.dlq.depth: letters in the queue, as the Monitor last counted them;
//   - retry.dlq.replays: replays, by result.
//
// It is safe for concurrent use.
type Queue struct {
	name     attribute.KeyValue
	letters  metric.Int64Counter
	replays  metric.Int64Counter
	depth    atomic.Int64
	counted  atomic.Bool // depth was counted at least once
	results  map[string]addOpts
	seen     capped // (source, group) pairs
	depthObs obsOpts
	reg      metric.Registration
}

// NewQueue makes the instruments of the dead letter queue named name (the
// retry.dlq.name attribute). It returns a *retry.InvalidError for an empty
// name or a bad option.
func NewQueue(name string, opts ...Option) (*Queue, error) {
	if err := checkName("otelretry.NewQueue", name); err != nil {
		return nil, err
	}
	c, err := configure(opts)
	if err != nil {
		return nil, err
	}
	o := &Queue{name: KeyQueue.String(name), depthObs: newObsOpts(KeyQueue.String(name)), results: map[string]addOpts{}}
	for _, r := range []string{ReplayDone, ReplayNotFound, ReplayClaimed, ReplayClaimLapsed, ReplayFailed} {
		o.results[r] = newAddOpts(o.name, KeyReplayResult.String(r))
	}
	return o, o.instruments(c.mp.Meter(scope))
}

func (o *Queue) instruments(m metric.Meter) error {
	depth, err1 := m.Int64ObservableGauge("retry.dlq.depth", metric.WithUnit("{letter}"),
		metric.WithDescription("Letters in the dead letter queue, as last counted."))
	var err2, err3 error
	o.letters, err2 = m.Int64Counter("retry.dlq.letters", metric.WithUnit("{letter}"),
		metric.WithDescription("Letters recorded in the dead letter queue."))
	o.replays, err3 = m.Int64Counter("retry.dlq.replays", metric.WithUnit("{letter}"),
		metric.WithDescription("Replays of letters, by result."))
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	var err error
	o.reg, err = m.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		if o.counted.Load() {
			obs.ObserveInt64(depth, o.depth.Load(), o.depthObs...)
		}
		return nil
	}, depth)
	return err
}

// Hooks returns mo with the Queue's hooks added to its OnRecord, OnReplay and
// OnDepth (after those already set): pass the result to dlq.NewMonitor. A
// nil or zero Queue returns mo unchanged.
func (o *Queue) Hooks(mo dlq.MonitorOptions) dlq.MonitorOptions {
	if o == nil || o.letters == nil { // not made by NewQueue: nothing to add
		return mo
	}
	mo.OnRecord = chain2(mo.OnRecord, o.OnRecord)
	mo.OnReplay = chain3(mo.OnReplay, o.OnReplay)
	mo.OnDepth = chain2(mo.OnDepth, o.OnDepth)
	return mo
}

func chain2[A, B any](first, then func(A, B)) func(A, B) {
	if first == nil {
		return then
	}
	return func(a A, b B) { first(a, b); then(a, b) }
}

func chain3[A, B, C any](first, then func(A, B, C)) func(A, B, C) {
	if first == nil {
		return then
	}
	return func(a A, b B, c C) { first(a, b, c); then(a, b, c) }
}

// OnRecord counts a letter recorded (dlq.MonitorOptions.OnRecord).
func (o *Queue) OnRecord(ctx context.Context, l dlq.Letter) {
	if o == nil || o.letters == nil || ctx == nil {
		return
	}
	source, group := l.Job.Source, l.Group()
	if !o.seen.admit(source + "\x00" + group) {
		source, group = "other", "other"
	}
	o.letters.Add(ctx, 1, metric.WithAttributes(o.name,
		KeySource.String(source), KeyGroup.String(group),
		KeyStopReason.String(stopReason(l.StopReason)),
		KeyClass.String(classOf(l.Last.Decision.Reason))))
}

// OnReplay counts a replay and its result (dlq.MonitorOptions.OnReplay).
func (o *Queue) OnReplay(ctx context.Context, _ string, err error) {
	if o == nil || o.replays == nil || ctx == nil {
		return
	}
	o.replays.Add(ctx, 1, o.results[replayResult(err)]...)
}

func replayResult(err error) string {
	switch {
	case err == nil:
		return ReplayDone
	case errors.Is(err, dlq.ErrClaimLapsed):
		return ReplayClaimLapsed
	case errors.Is(err, dlq.ErrNotFound):
		return ReplayNotFound
	case errors.Is(err, dlq.ErrClaimed):
		return ReplayClaimed
	}
	return ReplayFailed
}

// OnDepth keeps the depth retry.dlq.depth reports
// (dlq.MonitorOptions.OnDepth).
func (o *Queue) OnDepth(_ context.Context, letters int) {
	if o != nil {
		o.depth.Store(int64(letters))
		o.counted.Store(true)
	}
}

// Unregister stops reporting retry.dlq.depth.
func (o *Queue) Unregister() error {
	if o == nil || o.reg == nil {
		return nil
	}
	return o.reg.Unregister()
}

func stopReason(r dlq.StopReason) string {
	for _, s := range stopReasons {
		if r == s {
			return string(s)
		}
	}
	return "other"
}

// classOf returns reason if it is one of the fixed classes, ClassOther
// otherwise.
func classOf(reason string) string {
	for _, c := range classes {
		if c == reason {
			return c
		}
	}
	return ClassOther
}

// capped admits at most MaxDistinct distinct values.
type capped struct {
	mu   sync.Mutex
	seen map[string]struct{}
}

func (c *capped) admit(v string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[v]; ok {
		return true
	}
	if len(c.seen) >= MaxDistinct {
		return false
	}
	if c.seen == nil {
		c.seen = map[string]struct{}{}
	}
	c.seen[v] = struct{}{}
	return true
}
