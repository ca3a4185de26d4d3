package otelretry

import (
	"context"

	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/observe"
	"go.opentelemetry.io/otel/attribute"
)

// newServerOpts builds the attribute sets of the idempotency middleware's
// requests: one per outcome, by its index in serverOutcomes, then other's.
func newServerOpts(name attribute.KeyValue) []addOpts {
	opts := make([]addOpts, len(serverOutcomes)+1)
	for o, i := range serverOutcomes {
		opts[i] = newAddOpts(name, keyServer.String(serverLabel(o)))
	}
	opts[len(serverOutcomes)] = newAddOpts(name, keyServer.String(other))
	return opts
}

// request records a request the idempotency middleware answered: by its
// outcome, and as a store error when the store failed (the event's Err, or
// its Detail's).
func (o *Observer) request(ctx context.Context, e observe.Event) {
	ev, ok := e.Detail.(idempotency.Event)
	if !ok {
		return
	}
	i, known := serverOutcomes[ev.Outcome]
	if !known {
		i = len(serverOutcomes)
	}
	o.inst.requests.Add(ctx, 1, o.server[i]...)
	if e.Err != nil || ev.Err != nil {
		o.inst.storeFails.Add(ctx, 1, o.server[i]...)
	}
}
