package otelretry

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/policy"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// queue is what the Observer keeps of a dead letter queue: the depth last
// counted, the attribute sets of the replays, and the (source, group) pairs
// seen.
type queue struct {
	name     attribute.KeyValue
	depth    atomic.Int64
	counted  atomic.Bool // depth was counted at least once
	depthObs obsOpts
	results  [len(replays)]addOpts
	seen     capped
}

func (q *queue) init(name attribute.KeyValue) {
	q.name, q.depthObs = name, newObsOpts(name)
	for i, r := range replays {
		q.results[i] = newAddOpts(name, keyReplay.String(r))
	}
}

func (q *queue) report(g metric.Int64ObservableGauge, obs metric.Observer) {
	if q.counted.Load() {
		obs.ObserveInt64(g, q.depth.Load(), q.depthObs...)
	}
}

// letters records a dead letter queue's event: a letter added, replayed,
// or the queue counted.
func (o *Observer) letters(ctx context.Context, e observe.Event) {
	switch e.Kind {
	case observe.LetterAdded:
		if l, ok := e.Detail.(dlq.Letter); ok {
			o.letterAdded(ctx, l, e)
		}
	case observe.LetterReplayed:
		o.inst.replays.Add(ctx, 1, o.dlq.results[replayResult(e.Err)]...)
	case observe.QueueCounted:
		if n, ok := e.Detail.(int); ok {
			o.dlq.depth.Store(int64(n))
			o.dlq.counted.Store(true)
		}
	}
}

// letterAdded counts a letter by its source and root-cause group (capped),
// the reason its loop stopped (the event's Stop) and its last failure's
// class (the event's Decision).
func (o *Observer) letterAdded(ctx context.Context, l dlq.Letter, e observe.Event) {
	source, group := l.Job.Source, l.Group()
	if !o.dlq.seen.admit(source + "\x00" + group) {
		source, group = other, other
	}
	stop := outcomes[outcomeOf(e.Stop)]
	if e.Stop == policy.Continue {
		stop = dlqFailed
	}
	o.inst.letters.Add(ctx, 1, metric.WithAttributes(o.nameAttr,
		keySource.String(source), keyGroup.String(group), keyStopReason.String(stop),
		keyClass.String(classes[classOf(e.Decision.Reason)])))
}

// replayResult returns the index in replays of a replay that ended with err.
func replayResult(err error) int {
	switch {
	case err == nil:
		return replayDone
	case errors.Is(err, dlq.ErrClaimLapsed):
		return replayClaimLapsed
	case errors.Is(err, dlq.ErrNotFound):
		return replayNotFound
	case errors.Is(err, dlq.ErrClaimed):
		return replayClaimed
	}
	return replayFailed
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
