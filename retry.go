package retry

import (
	"context"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/policy"
)

// Retrier retries operations with one validated configuration. Build it once
// with New and share it: it is immutable and safe for concurrent use, and
// (*Retrier).Do on a first-attempt success allocates nothing.
//
// The zero Retrier, and a nil *Retrier, behave as New() with no options.
type Retrier struct {
	p         policy.Policy
	classify  classify.Func
	hook      func(context.Context, Event)
	src       jitter.Source
	result    any
	timed     bool // keep time from the start of every call
	outermost bool // this loop retries for loops nested in its operation
	plain     bool // classify is classify.Default alone
	fast      bool // nothing to do around a first attempt but call it
	built     bool
}

var defaultRetrier = mustBuild(config{})

// New validates opts once and returns a Retrier, or an *InvalidError naming
// the first bad option and its value.
func New(opts ...Option) (*Retrier, error) {
	var c config
	for _, o := range opts {
		if o == nil {
			c.fail(invalid("Option", nil, "must not be nil"))
			continue
		}
		o(&c)
	}
	if c.err != nil {
		return nil, c.err
	}
	return build(c), nil
}

func build(c config) *Retrier {
	r := &Retrier{p: c.p, src: c.src, result: c.result, outermost: c.outermost, built: true}
	if r.src == nil {
		r.src = jitter.Runtime{}
	}
	r.classify, r.plain = classify.Default, len(c.classifiers) == 0
	if len(c.classifiers) > 0 {
		r.classify = classify.Chain(append(c.classifiers, classify.Default)...)
	}
	switch len(c.hooks) {
	case 0:
	case 1:
		r.hook = c.hooks[0]
	default:
		hooks := c.hooks
		r.hook = func(ctx context.Context, e Event) {
			for _, h := range hooks {
				h(ctx, e)
			}
		}
	}
	r.timed = r.p.MaxElapsed > 0 || r.hook != nil
	r.fast = !r.timed && !r.p.RequireKey && r.p.AttemptTimeout <= 0 && r.result == nil && r.p.Budget == nil && !r.outermost
	return r
}

func mustBuild(c config) *Retrier { return build(c) }

func (r *Retrier) get() *Retrier {
	if r == nil || !r.built {
		return defaultRetrier
	}
	return r
}

// Policy returns the Retrier's policy (a copy).
func (r *Retrier) Policy() policy.Policy { return r.get().p }

// Do calls op until it succeeds or the policy says stop, and returns nil or an
// *Error. op receives the context for its attempt.
func (r *Retrier) Do(ctx context.Context, op func(context.Context) error) error {
	if r != nil && r.fast && op != nil && ctx != nil && ctx.Err() == nil {
		// The hot path: no clock, no hook, no per-attempt context.
		if err := op(ctx); err != nil {
			return r.retry(ctx, ctx, op, err, time.Time{}, nil)
		}
		return nil
	}
	r = r.get()
	if r.result != nil {
		return invalid("Do", describe(r.result), "a Retrier built WithResult needs DoValue, Value or RunValue")
	}
	return r.run(ctx, op, nil)
}

// Run is Do that also reports the call's Stats, on success and on failure
// (where the *Error carries them too).
func (r *Retrier) Run(ctx context.Context, op func(context.Context) error) (Stats, error) {
	r = r.get()
	if r.result != nil {
		return Stats{}, invalid("Run", describe(r.result), "a Retrier built WithResult needs DoValue, Value or RunValue")
	}
	var st Stats
	err := r.run(ctx, op, &st)
	return st, err
}

// Wrap returns op's retried twin: a function that calls r.Do(ctx, op).
func (r *Retrier) Wrap(op func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error { return r.Do(ctx, op) }
}

// Value calls op through r until it succeeds or the policy says stop, and
// returns the last value op returned with nil or an *Error.
func Value[T any](ctx context.Context, r *Retrier, op func(context.Context) (T, error)) (T, error) {
	return runValue(ctx, r.get(), op, nil)
}

// RunValue is Value that also reports the call's Stats.
func RunValue[T any](ctx context.Context, r *Retrier, op func(context.Context) (T, error)) (T, Stats, error) {
	var st Stats
	v, err := runValue(ctx, r.get(), op, &st)
	return v, st, err
}

func runValue[T any](ctx context.Context, r *Retrier, op func(context.Context) (T, error), st *Stats) (T, error) {
	if st == nil && r.fast && op != nil && ctx != nil && ctx.Err() == nil {
		v, err := op(ctx) // the hot path, as in (*Retrier).Do
		if err == nil {
			return v, nil
		}
		err = r.retry(ctx, ctx, func(ctx context.Context) error {
			var err error
			v, err = op(ctx)
			return err
		}, err, time.Time{}, nil)
		return v, err
	}
	var v T
	check, ok := r.result.(classify.ResultFunc[T])
	if r.result != nil && !ok {
		return v, invalid("WithResult", describe(r.result), "does not classify the result type "+describe(v))
	}
	if op == nil {
		return v, invalid("op", nil, "must not be nil")
	}
	err := r.run(ctx, func(ctx context.Context) error {
		var err error
		v, err = op(ctx)
		if err == nil && check != nil {
			if d := check(v); d.Verdict == classify.Retry {
				return &ResultError{Decision: d}
			}
		}
		return err
	}, st)
	return v, err
}

// Do calls op until it succeeds or the policy set by opts says stop. It
// validates opts on every call: build a Retrier with New where calls are
// frequent.
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
	return runValue(ctx, r, op, nil)
}

// Wrap returns op's retried twin under the policy set by opts. Bad options
// make every call of the returned function return the *InvalidError, without
// calling op.
func Wrap(op func(context.Context) error, opts ...Option) func(context.Context) error {
	r, err := newOrDefault(opts)
	if err != nil {
		return func(context.Context) error { return err }
	}
	return r.Wrap(op)
}

// WrapValue returns op's retried twin under the policy set by opts. Bad
// options make every call of the returned function return the *InvalidError,
// without calling op.
func WrapValue[T any](op func(context.Context) (T, error), opts ...Option) func(context.Context) (T, error) {
	r, err := newOrDefault(opts)
	return func(ctx context.Context) (T, error) {
		if err != nil {
			var zero T
			return zero, err
		}
		return runValue(ctx, r, op, nil)
	}
}

func newOrDefault(opts []Option) (*Retrier, error) {
	if len(opts) == 0 {
		return defaultRetrier, nil
	}
	return New(opts...)
}
