package retry

import (
	"log/slog"
	"time"

	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/policy"
)

// Option configures a Retrier. Options apply in order, so a later option
// overrides an earlier one (WithPolicy replaces every policy field set
// before it). A bad option makes New, and Do, return an *InvalidError naming
// it and its value.
type Option func(*config) *InvalidError

type config struct {
	p           policy.Policy
	classifiers []classify.Func
	observers   []observe.Observer
	src         jitter.Source
	budget      budget.Budget
	noBudget    bool // WithoutBudget: no default budget either
	limiter     limit.Limiter
	breakers    *breaker.Breakers
	cooldowns   *breaker.Cooldowns
	outermost   bool
}

// apply applies one option, refusing a nil one.
func (c *config) apply(o Option) *InvalidError {
	if o == nil {
		return invalid("Option", nil, "must not be nil")
	}
	return o(c)
}

// WithPolicy replaces the whole policy, e.g. with a preset such as
// policy.LLMCall(). Options after it adjust it.
func WithPolicy(p policy.Policy) Option {
	return func(c *config) *InvalidError {
		if err := p.Validate(); err != nil {
			return &InvalidError{Name: "WithPolicy", Value: "policy.Policy{…}", Err: err}
		}
		c.p = p
		return nil
	}
}

// WithMaxAttempts sets how many attempts a call makes at most, the first
// included; n must be at least 1. The default is 3.
func WithMaxAttempts(n int) Option {
	return func(c *config) *InvalidError {
		if n < 1 {
			return invalid("WithMaxAttempts", n, "must be at least 1")
		}
		c.p.MaxAttempts = n
		return nil
	}
}

// WithMaxElapsed stops retrying once the next attempt would start more than d
// after the call began; 0 means no limit (the default). It does not interrupt
// a running attempt: give the context a deadline for that.
func WithMaxElapsed(d time.Duration) Option {
	return durationOption("WithMaxElapsed", d, func(p *policy.Policy) { p.MaxElapsed = d })
}

// WithAttemptTimeout bounds each attempt through the context it receives;
// 0 means none (the default). An attempt that times out is retried only if the
// operation is idempotent or keyed.
func WithAttemptTimeout(d time.Duration) Option {
	return durationOption("WithAttemptTimeout", d, func(p *policy.Policy) { p.AttemptTimeout = d })
}

// WithMaxDelay sets the longest single wait; 0 means the default, 30s. A
// server asking for a longer Retry-After makes the call return at once with
// ErrWaitTooLong and the wait in Error.RetryAfter.
func WithMaxDelay(d time.Duration) Option {
	return durationOption("WithMaxDelay", d, func(p *policy.Policy) { p.MaxDelay = d })
}

func durationOption(name string, d time.Duration, set func(*policy.Policy)) Option {
	return func(c *config) *InvalidError {
		if d < 0 {
			return invalid(name, d, "must not be negative")
		}
		set(&c.p)
		return nil
	}
}

// WithBackoff sets the schedule of nominal delays. The default is
// backoff.Exponential{Base: 100ms, Factor: 2, MaxDelay: 10s}.
func WithBackoff(b backoff.Backoff) Option {
	return func(c *config) *InvalidError {
		if err := check("WithBackoff", b); err != nil {
			return err
		}
		c.p.Backoff = b
		return nil
	}
}

// WithJitter sets how each nominal delay is spread. The default is
// jitter.Full{}.
func WithJitter(j jitter.Jitter) Option {
	return func(c *config) *InvalidError {
		if err := check("WithJitter", j); err != nil {
			return err
		}
		c.p.Jitter = j
		return nil
	}
}

// WithJitterSource sets the source of the random numbers the jitter draws.
// The default, jitter.Runtime{}, takes no lock; jitter.NewSeeded makes delays
// reproducible in tests. The source must be safe for concurrent use if the
// Retrier is shared.
func WithJitterSource(src jitter.Source) Option {
	return func(c *config) *InvalidError {
		if err := check("WithJitterSource", src); err != nil {
			return err
		}
		c.src = src
		return nil
	}
}

// WithClassifier adds a classifier that runs before the built-in ones
// (classify.Default); the first classifier with an opinion wins. Several
// WithClassifier options run in the order given.
func WithClassifier(f classify.Func) Option {
	return func(c *config) *InvalidError {
		if f == nil {
			return invalid("WithClassifier", nil, "must not be nil")
		}
		c.classifiers = append(c.classifiers, f)
		return nil
	}
}

// Strict retries only failures a classifier recognised as transient: an
// unrecognised error stops the call (ErrPermanent, class "unclassified").
// The presets for calls that cost money are strict.
func Strict() Option {
	return func(c *config) *InvalidError { c.p.Strict = true; return nil }
}

// Idempotent declares that repeating the operation is harmless, so an attempt
// that timed out — and may still be running — can be retried. Without it, and
// without an idempotency key, a timed-out attempt ends the call with
// ErrNotIdempotent.
func Idempotent() Option {
	return func(c *config) *InvalidError { c.p.Idempotent = true; return nil }
}

// WithBudget shares a retry budget (budget.TokenBucket, budget.Ratio or any
// budget.Budget) with every call of the Retrier, and with every other
// Retrier given the same budget. When it refuses a retry the call ends at once
// with the last error and ErrBudget.
//
// Without it, every Retrier has a budget of its own: a budget.TokenBucket
// with the default configuration (500 tokens; a transient failure takes 5,
// a timeout 10, a success puts 1 back; no retry at or below 250). It lets
// retries through while failures are rare, and stops them within a few
// dozen failures when a dependency fails for everyone, so that the retries
// of a Retrier shared by a process's calls to a dependency cannot keep that
// dependency down after it comes back (bench/storm). WithoutBudget removes
// it.
func WithBudget(b budget.Budget) Option {
	return func(c *config) *InvalidError {
		if err := check("WithBudget", b); err != nil {
			return err
		}
		c.budget, c.noBudget = b, false
		return nil
	}
}

// WithoutBudget makes a Retrier retry whatever the share of failures,
// without the default retry budget (see WithBudget): for a Retrier whose
// calls are few, or whose budget is enforced elsewhere. A later WithBudget
// gives it one again.
func WithoutBudget() Option {
	return func(c *config) *InvalidError { c.budget, c.noBudget = nil, true; return nil }
}

// Outermost makes this loop the one layer that retries. Retry loops nested in
// its operation — any loop whose context derives from the one the operation
// receives, which is a SingleAttempt context — make a single attempt each and
// return its error unchanged, so that this loop classifies it and decides.
// Without Outermost, the default is the other way round: the innermost loop
// retries, and an outer loop never retries an error that an inner loop
// already gave up on (an *Error). Either way, one layer's attempts are made,
// not the product of every layer's.
//
// Outermost adds a context value (one allocation) to every call.
func Outermost() Option {
	return func(c *config) *InvalidError { c.outermost = true; return nil }
}

// WithLimiter paces every attempt of every call — the first one included —
// through l, shared with every other Retrier given the same limiter
// (limit.Adaptive, limit.Throttler, or any limit.Limiter). Before each
// attempt the loop asks l for permission, and l may make it wait its turn:
// at most the policy's MaxDelay, and never past MaxElapsed or the context's
// deadline. After each attempt the loop tells l how it ended (see
// limit.OutcomeOf). When l refuses, or the turn would come too late, the call
// ends at once with ErrLimited: nothing was sent, and the refusal is never
// retried.
//
// A limiter's wait before a retry counts in Stats.Waited; a wait before the
// first attempt counts only in Elapsed. Either is visible: observers receive
// an observe.LimiterWaited event (Delay: how long the limiter held the
// attempt), which WithLogger logs like a scheduled retry.
//
// A Hedger asks l too: for the first attempt and for an attempt that
// follows a failure as above, and for a hedge without waiting — a hedge l
// cannot let go at once is not sent (observe.HedgeSkipped). Every attempt
// sent is recorded, a loser cancelled because another won as limit.Other,
// and so is a permission granted to an attempt that the call, ended
// meanwhile, did not send.
func WithLimiter(l limit.Limiter) Option {
	return func(c *config) *InvalidError {
		if err := check("WithLimiter", l); err != nil {
			return err
		}
		c.limiter = l
		return nil
	}
}

// WithObserver adds o to the observers of every call: each attempt's end,
// each scheduled retry, each give-up, each hedge, each wait a limiter or a
// cooldown imposed, and the state changes of the breakers and cooldowns the
// calls moved (see package observe). It runs on the goroutine that did the
// work, synchronously: it must be quick and safe for concurrent use.
// Several observers hear every event, in the order given.
func WithObserver(o observe.Observer) Option {
	return func(c *config) *InvalidError {
		if f, ok := o.(observe.Func); ok && f == nil {
			o = nil
		}
		if err := check("WithObserver", o); err != nil {
			return err
		}
		c.observers = append(c.observers, o)
		return nil
	}
}

// WithLogger logs every scheduled retry — at INFO when the wait is 1s or
// more, long enough for a person to notice, and at DEBUG otherwise — and
// every give-up at INFO, every wait a limiter or a cooldown imposed as a
// retry's, every hedge at DEBUG, and every change of a breaker's state at
// WARN (to open) or INFO, with the call's context. A nil logger logs
// nothing, as does a Retrier without this option.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) *InvalidError {
		if l != nil {
			c.observers = append(c.observers, logObserver{l})
		}
		return nil
	}
}

// WithBreakers puts the circuit breakers b — one per call key
// (breaker.KeyOf) — around every call, or every attempt when b's Config
// says PerAttempt. A call its breaker refuses fails at once with
// ErrBreakerOpen: nothing was sent, and it is not retried. b hears of every
// call's outcome: a failure is what the Retrier would retry. b may be shared
// with other Retriers, which share each key's breaker.
func WithBreakers(b *breaker.Breakers) Option {
	return func(c *config) *InvalidError {
		if b == nil {
			return invalid("WithBreakers", nil, "must not be nil (build them with breaker.New)")
		}
		c.breakers = b
		return nil
	}
}

// WithCooldowns checks every attempt against cd's cooldowns, keyed by the
// call's key (breaker.KeyOf): an attempt to a key cooling down — a server
// answered 503, or gRPC UNAVAILABLE, with a Retry-After, to this call or
// another — waits until the cooldown ends before it is sent, or, when the
// call cannot wait that long (MaxDelay, MaxElapsed, the context's deadline),
// the call stops with ErrWaitTooLong (or ErrElapsed, ErrDeadline), the
// *breaker.CooldownError as its last error if it made no attempt, and
// nothing is sent. Every such answer starts its key's cooldown in cd.
func WithCooldowns(cd *breaker.Cooldowns) Option {
	return func(c *config) *InvalidError {
		if cd == nil {
			return invalid("WithCooldowns", nil, "must not be nil (build them with breaker.NewCooldowns)")
		}
		c.cooldowns = cd
		return nil
	}
}

// check reports a nil value, or one whose Validate method fails.
func check(name string, v any) *InvalidError {
	if v == nil {
		return invalid(name, nil, "must not be nil")
	}
	if val, ok := v.(interface{ Validate() error }); ok {
		if err := val.Validate(); err != nil {
			return &InvalidError{Name: name, Value: v, Err: err}
		}
	}
	return nil
}
