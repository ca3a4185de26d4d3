package main

import (
	"context"
	"time"

	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/policy"
)

// ours is a Retrier of the library with its default policy (3 attempts,
// 100 ms doubling to 10 s with full jitter, MaxDelay 30 s), the attempt
// timeout of the model, and Idempotent, so that timeouts are retried. Its
// stages are the library's own code, called as the Retrier's loop calls
// them (call.go): after an attempt, the budget's Record with the attempt's
// outcome and the limiter's Record with limit.OutcomeOf; after a failure,
// policy.Policy.Next, then, if it would retry, the budget's Allow; before
// every attempt, the limiter, waited for within the policy's MaxDelay.
type ours struct {
	pol      policy.Policy
	budgetOf func(q *request) budget.Budget // the budget of q's Retrier; nil: none
	lim      *limit.Adaptive                // the limiter of every call; nil: none
	e        env
	decision classify.Decision // what the Retrier's classifiers make of an attempt's timeout
}

// errTimeout is what an attempt returns when its timeout passes.
var errTimeout = context.DeadlineExceeded

func newOurs(e env, budgetOf func(*request) budget.Budget, lim *limit.Adaptive) *ours {
	return &ours{
		pol:      policy.Policy{AttemptTimeout: timeout, Idempotent: true},
		budgetOf: budgetOf, lim: lim, e: e,
		decision: classify.Default(errTimeout),
	}
}

func (o *ours) limiter(*request) *limit.Adaptive { return o.lim }

func (o *ours) answered(q *request) {
	if b := o.budgetOf(q); b != nil {
		b.Record(budget.Attempt{Retry: q.attempts > 1, Outcome: budget.Succeeded})
	}
	if o.lim != nil {
		o.lim.Record(context.Background(), limit.Outcome{Result: limit.Accepted})
	}
}

func (o *ours) timedOut(q *request, now time.Duration) (time.Duration, bool) {
	b := o.budgetOf(q)
	if b != nil {
		b.Record(budget.Attempt{Retry: q.attempts > 1, Outcome: budgetOutcome(o.decision)})
	}
	if o.lim != nil {
		o.lim.Record(context.Background(), limit.OutcomeOf(errTimeout, o.decision))
	}
	s := policy.State{Attempt: int(q.attempts), Elapsed: now - q.start, Prev: q.prev}
	delay, stop := o.pol.Next(s, o.decision, o.e.rng.Uint64())
	if stop == policy.Continue && b != nil && !b.Allow() {
		stop = policy.StopBudget
	}
	return delay, stop == policy.Continue
}

// budgetOutcome is what the Retrier tells its budget of a failure
// classified d (the root's outcome, call.go), for the failures of this
// model: a timeout, or another transient failure.
func budgetOutcome(d classify.Decision) budget.Outcome {
	if d.Timeout {
		return budget.TimedOut
	}
	return budget.Failed
}

// defaultBudget is the budget of a Retrier built without WithBudget: a
// budget.TokenBucket with the zero configuration (retry.go).
func defaultBudget() budget.Budget {
	b, err := budget.NewTokenBucket(budget.TokenBucketConfig{})
	if err != nil {
		panic(err) // the zero configuration is valid
	}
	return b
}

// sharedBudget is one budget for every call: one Retrier shared by the
// process.
func sharedBudget(b budget.Budget) func(*request) budget.Budget {
	return func(*request) budget.Budget { return b }
}

// perClient is one default budget per client: a Retrier per process.
func perClient() func(*request) budget.Budget {
	bs := make([]budget.Budget, clients)
	for i := range bs {
		bs[i] = defaultBudget()
	}
	return func(q *request) budget.Budget { return bs[q.client] }
}

// perCall is a default budget per call: a Retrier built for each call
// (retry.Do with options, say), whose budget sees nothing but that call.
func perCall(q *request) budget.Budget {
	if q.budget == nil {
		q.budget = defaultBudget()
	}
	return q.budget
}

// newLimiter is a limit.Adaptive with Timeouts, on the run's clock: the
// limiter of one process, or the fleet's (limit/redis runs the same model
// in Redis, each permission one round trip).
func newLimiter(e env) *limit.Adaptive {
	l, err := limit.NewAdaptive(limit.AdaptiveConfig{Timeouts: true, Now: e.now})
	if err != nil {
		panic(err)
	}
	return l
}
