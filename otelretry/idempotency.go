package otelretry

import (
	"errors"
	"net/http"

	"github.com/retrykit/retry/idempotency"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Attribute keys of the idempotency middleware's metrics.
const (
	KeyServer     = attribute.Key("retry.idempotency.name")    // the name given to NewServer
	KeyKeyOutcome = attribute.Key("retry.idempotency.outcome") // see NewServer
)

// serverOutcomes are the middleware's outcomes, each with its attribute
// value: the Outcome's String with "_" for " ".
var serverOutcomes = [...]struct {
	o    idempotency.Outcome
	name string
}{
	{idempotency.OutcomeExecuted, "executed"},
	{idempotency.OutcomeReplayed, "replayed"},
	{idempotency.OutcomeInProgress, "in_progress"},
	{idempotency.OutcomeKeyReuse, "key_reuse"},
	{idempotency.OutcomeNotRetained, "not_retained"},
	{idempotency.OutcomeStoreFailed, "store_failed"},
	{idempotency.OutcomeScopeFull, "scope_full"},
	{idempotency.OutcomeRejected, "rejected"},
}

// Server observes the idempotency middleware through its hook: pass Hook to
// idempotency.WithHook. It reports:
//
//   - retry.idempotency.requests: guarded requests, by outcome: executed,
//     replayed, in_progress (409), key_reuse (422), not_retained (409),
//     store_failed (503), scope_full (429), rejected (400, 413), other;
//   - retry.idempotency.store_errors: requests whose store failed, by
//     outcome (an execution whose result could not be recorded included).
//
// Neither carries a key, a path or an execution id. It is safe for
// concurrent use.
type Server struct {
	requests    metric.Int64Counter
	storeErrors metric.Int64Counter
	opts        [len(serverOutcomes) + 1]addOpts // the last: other
}

// NewServer makes the instruments of the middleware named name (the
// retry.idempotency.name attribute). It returns a *retry.InvalidError for an
// empty name or a bad option.
func NewServer(name string, opts ...Option) (*Server, error) {
	if err := checkName("otelretry.NewServer", name); err != nil {
		return nil, err
	}
	c, err := configure(opts)
	if err != nil {
		return nil, err
	}
	o := &Server{}
	n := KeyServer.String(name)
	for i, so := range serverOutcomes {
		o.opts[i] = newAddOpts(n, KeyKeyOutcome.String(so.name))
	}
	o.opts[len(serverOutcomes)] = newAddOpts(n, KeyKeyOutcome.String("other"))
	m := c.mp.Meter(scope)
	var err1, err2 error
	o.requests, err1 = m.Int64Counter("retry.idempotency.requests", metric.WithUnit("{request}"),
		metric.WithDescription("Requests the idempotency middleware guarded, by what it did."))
	o.storeErrors, err2 = m.Int64Counter("retry.idempotency.store_errors", metric.WithUnit("{error}"),
		metric.WithDescription("Requests during which the idempotency store failed."))
	return o, errors.Join(err1, err2)
}

// Hook records e. Pass it to idempotency.WithHook.
func (o *Server) Hook(r *http.Request, e idempotency.Event) {
	if o == nil || o.requests == nil || r == nil {
		return
	}
	opts := o.opts[len(serverOutcomes)]
	for i, so := range serverOutcomes {
		if so.o == e.Outcome {
			opts = o.opts[i]
		}
	}
	ctx := r.Context()
	o.requests.Add(ctx, 1, opts...)
	if e.Err != nil {
		o.storeErrors.Add(ctx, 1, opts...)
	}
}
