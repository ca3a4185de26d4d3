package retry

import (
	"context"
	"slices"

	"github.com/retrykit/retry/backoff/cenkalti"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/policy"
)

// Retrier retries operations with one validated configuration: its policy
// and the stages every call goes through (see the package documentation).
// Build it once with New and share it: it is immutable and safe for
// concurrent use, and (*Retrier).Do on a first-attempt success allocates
// nothing.
//
// The zero Retrier behaves as New() with no options. A nil *Retrier is a
// mistake, not a configuration: every call on it returns an *InvalidError.
type Retrier struct {
	c          config // what it was built from, for With
	p          policy.Policy
	classifier classify.Func    // the caller's classifiers, chained; nil: none
	obs        observe.Observer // every observer, joined; nil: none
	src        jitter.Source
	budget     budget.Budget      // shared with other calls and Retriers; its own by default; nil: WithoutBudget
	limiter    limit.Limiter      // shared likewise; nil: none
	breakers   *breaker.Breakers  // shared likewise; nil: none
	cooldowns  *breaker.Cooldowns // shared likewise; nil: none
	err        *InvalidError      // New refused the options: every call returns it
	outermost  bool               // this loop retries for loops nested in its operation
	gated      bool               // a stage comes before each attempt: cooldowns, breakers per attempt, a limiter
	staged     bool               // a stage hears of each attempt: a budget, a limiter, breakers, cooldowns
	fast       bool               // nothing to do around a first attempt but call it
	built      bool
}

var defaultRetrier = build(config{})

// New validates opts once and returns a Retrier, or the first bad option as an
// *InvalidError naming it and its value. A Retrier whose options were refused
// is still returned, and fails every call with that error without running the
// operation: a discarded error cannot turn into the defaults.
func New(opts ...Option) (*Retrier, error) {
	return config{}.build(opts)
}

// With returns a Retrier with r's configuration and opts applied after it:
// the same stages — budget, limiter, breakers, cooldowns, observers, shared
// with r — under an adjusted policy, for an operation that needs its own
// (a request that may be sent only once: WithMaxAttempts(1)). It refuses a
// bad option as New does, and a nil or refused r.
func (r *Retrier) With(opts ...Option) (*Retrier, error) {
	r, err := r.ready()
	if err != nil {
		return &Retrier{err: asInvalid(err), built: true}, err
	}
	return r.c.build(opts)
}

// Keyed reports whether a stage of r reads the call's key (breaker.KeyOf):
// breakers, cooldowns, or a limiter with a method CallKeyed() bool that
// says so. An integration sets the key only then, since a context value
// costs an allocation per call. A nil Retrier reads none.
func (r *Retrier) Keyed() bool {
	if r == nil {
		return false
	}
	l, ok := r.limiter.(interface{ CallKeyed() bool })
	return r.breakers != nil || r.cooldowns != nil || ok && l.CallKeyed()
}

func (c config) build(opts []Option) (*Retrier, error) {
	c.classifiers = slices.Clip(c.classifiers)
	c.observers = slices.Clip(c.observers)
	for _, o := range opts {
		if err := c.apply(o); err != nil {
			return &Retrier{err: err, built: true}, err
		}
	}
	return build(c), nil
}

func asInvalid(err error) *InvalidError {
	if ie, ok := err.(*InvalidError); ok {
		return ie
	}
	return invalid("Retrier", nil, err.Error())
}

func build(c config) *Retrier {
	if c.budget == nil && !c.noBudget {
		c.budget = defaultBudget() // kept in c, so that With shares it
	}
	r := &Retrier{c: c, p: c.p, budget: c.budget, limiter: c.limiter, breakers: c.breakers, cooldowns: c.cooldowns,
		src: c.src, outermost: c.outermost, obs: join(c.observers), built: true}
	if r.src == nil {
		r.src = jitter.Runtime{}
	}
	if len(c.classifiers) > 0 {
		r.classifier = classify.Chain(c.classifiers...)
	}
	r.gated = r.cooldowns != nil || r.breakers.PerAttempt() || r.limiter != nil
	r.staged = r.budget != nil || r.limiter != nil || r.breakers != nil || r.cooldowns != nil
	r.fast = r.obs == nil && !r.p.RequireKey && r.p.AttemptTimeout <= 0 && r.limiter == nil &&
		!r.outermost && r.breakers == nil && r.cooldowns == nil
	return r
}

// defaultBudget is the retry budget of a Retrier built without WithBudget
// or WithoutBudget: a token bucket with the defaults of package budget.
func defaultBudget() budget.Budget {
	b, err := budget.NewTokenBucket(budget.TokenBucketConfig{})
	if err != nil {
		panic(err) // the zero configuration is valid
	}
	return b
}

// succeeded is the Attempt a budget records for a first attempt that
// succeeded.
var succeeded = budget.Attempt{Outcome: budget.Succeeded}

// defaultChain is what every Retrier applies after the caller's classifiers:
// the built-in table, and cenkalti/backoff v4's Permanent marker, so that
// code migrating from it keeps its permanent errors permanent. The marker is
// looked for only when the table would not stop anyway.
func defaultChain(err error) classify.Decision {
	d := classify.Default(err)
	if d.Verdict != classify.Stop {
		if c := cenkalti.Classify(err); c.Verdict != classify.NoOpinion {
			return c
		}
	}
	return d
}

// ready returns the Retrier to run with: r, the defaults for the zero
// Retrier, or the reason r cannot run.
func (r *Retrier) ready() (*Retrier, error) {
	switch {
	case r == nil:
		return nil, invalid("Retrier", nil, "must not be nil (build one with retry.New)")
	case r.err != nil:
		return nil, r.err
	case !r.built:
		return defaultRetrier, nil
	}
	return r, nil
}

// Do calls op until it succeeds or the policy says stop, and returns nil or an
// *Error. op receives the context for its attempt.
func (r *Retrier) Do(ctx context.Context, op func(context.Context) error) error {
	if r != nil && r.fast && op != nil && ctx != nil && ctx.Err() == nil {
		// The hot path: no stage but the budget, no observer, no per-attempt
		// context; one monotonic clock read so that Elapsed covers the whole
		// call if it fails.
		start := monoNow()
		if err := op(ctx); err != nil {
			return r.resume(ctx, op, err, start)
		}
		if r.budget != nil { // a full bucket reads one atomic word
			r.budget.Record(succeeded)
		}
		return nil
	}
	r, err := r.ready()
	if err != nil {
		return err
	}
	return r.run(ctx, op, nil)
}

// Run is Do that also reports the call's Stats, on success and on failure
// (where the *Error carries them too).
func (r *Retrier) Run(ctx context.Context, op func(context.Context) error) (Stats, error) {
	r, err := r.ready()
	if err != nil {
		return Stats{}, err
	}
	var st Stats
	err = r.run(ctx, op, &st)
	return st, err
}

// Value calls op through r until it succeeds or the policy says stop, and
// returns the last value op returned, the call's Stats, and nil or an *Error.
func Value[T any](ctx context.Context, r *Retrier, op func(context.Context) (T, error)) (T, Stats, error) {
	var v T
	var st Stats
	r, err := r.ready()
	if err != nil {
		return v, st, err
	}
	if op == nil {
		return v, st, invalid("op", nil, "must not be nil")
	}
	err = r.run(ctx, func(ctx context.Context) error {
		var err error
		v, err = op(ctx)
		return err
	}, &st)
	return v, st, err
}

// Do calls op until it succeeds or the policy set by opts says stop. With
// opts it validates them and builds a Retrier on every call, with a retry
// budget of its own that no other call spends: where calls are frequent,
// build a Retrier with New once and share it, so that its budget stops the
// retries of a dependency that stalls. Without opts, Do runs on one default
// Retrier whose budget every such call of the process shares.
func Do(ctx context.Context, op func(context.Context) error, opts ...Option) error {
	r, err := newOrDefault(opts)
	if err != nil {
		return err
	}
	return r.Do(ctx, op)
}

// DoValue calls op until it succeeds or the policy set by opts says stop, and
// returns the last value op returned.
func DoValue[T any](ctx context.Context, op func(context.Context) (T, error), opts ...Option) (T, error) {
	r, err := newOrDefault(opts)
	if err != nil {
		var zero T
		return zero, err
	}
	return doValue(ctx, r, op)
}

// doValue is Value without Stats: a first attempt that succeeds reads no
// clock beyond the one monotonic read of (*Retrier).Do.
func doValue[T any](ctx context.Context, r *Retrier, op func(context.Context) (T, error)) (T, error) {
	var v T
	if op == nil {
		return v, invalid("op", nil, "must not be nil")
	}
	err := r.Do(ctx, func(ctx context.Context) error {
		var err error
		v, err = op(ctx)
		return err
	})
	return v, err
}

// Wrap returns op's retried twin under the policy set by opts: a function
// that retries op on every call. Bad options make every call of the returned
// function return the *InvalidError, without calling op.
func Wrap(op func(context.Context) error, opts ...Option) func(context.Context) error {
	r, _ := New(opts...)
	return func(ctx context.Context) error { return r.Do(ctx, op) }
}

// WrapValue is Wrap for an operation that returns a value.
func WrapValue[T any](op func(context.Context) (T, error), opts ...Option) func(context.Context) (T, error) {
	r, _ := New(opts...)
	return func(ctx context.Context) (T, error) { return doValue(ctx, r, op) }
}

func newOrDefault(opts []Option) (*Retrier, error) {
	if len(opts) == 0 {
		return defaultRetrier, nil
	}
	return New(opts...)
}
