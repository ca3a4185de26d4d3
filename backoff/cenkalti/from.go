package cenkalti

import (
	"fmt"
	"math"
	"time"

	cbackoff "github.com/cenkalti/backoff/v4"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/jitter"
)

// From converts a v4 BackOff into a schedule and a jitter that make the same
// waits, as the table in the package documentation says. What it cannot
// convert — a configuration whose v4 schedule no schedule here expresses,
// *StopBackOff, the wrappers whose state v4 keeps private, nil — returns an
// error matching retry.ErrInvalid that says what to use instead.
func From(b cbackoff.BackOff) (backoff.Backoff, jitter.Jitter, error) {
	switch b := b.(type) {
	case *cbackoff.ExponentialBackOff:
		if b == nil {
			return nil, nil, argerr.New("cenkalti.From", "(*backoff.ExponentialBackOff)(nil)", "must not be nil")
		}
		return fromExponential(b)
	case *cbackoff.ConstantBackOff:
		return fromConstant(b)
	case *cbackoff.ZeroBackOff:
		return backoff.Constant(0), jitter.None{}, nil
	case *cbackoff.StopBackOff:
		return nil, nil, argerr.New("cenkalti.From", "*backoff.StopBackOff", "never retries: use retry.WithMaxAttempts(1)")
	case nil:
		return nil, nil, argerr.New("cenkalti.From", nil, "must not be nil")
	}
	return nil, nil, argerr.New("cenkalti.From", fmt.Sprintf("%T", b), "unsupported BackOff type: convert the BackOff it wraps, "+
		"and map the wrapper to an option (WithMaxRetries(b, n) is retry.WithMaxAttempts(n+1); WithContext is the context given to retry.Do)")
}

func fromConstant(b *cbackoff.ConstantBackOff) (backoff.Backoff, jitter.Jitter, error) {
	switch {
	case b == nil:
		return nil, nil, argerr.New("cenkalti.From", "(*backoff.ConstantBackOff)(nil)", "must not be nil")
	case b.Interval < 0:
		return nil, nil, argerr.New("cenkalti.From", "ConstantBackOff{Interval: "+b.Interval.String()+"}", "must not be negative")
	}
	return backoff.Constant(b.Interval), jitter.None{}, nil
}

func fromExponential(b *cbackoff.ExponentialBackOff) (backoff.Backoff, jitter.Jitter, error) {
	if err := checkExponential(b); err != nil {
		return nil, nil, err
	}
	j := jitter.Proportional(b.RandomizationFactor)
	if b.InitialInterval == 0 {
		return backoff.Constant(0), j, nil // v4 multiplies 0, or caps it at MaxInterval 0: 0 forever
	}
	if err := checkGrowth(b); err != nil {
		return nil, nil, err
	}
	if next(b, b.InitialInterval) == b.InitialInterval {
		return backoff.Constant(b.InitialInterval), j, nil // v4's interval never moves
	}
	return backoff.Exponential{Base: b.InitialInterval, Factor: b.Multiplier, MaxDelay: b.MaxInterval}, j, nil
}

// checkExponential refuses what v4 would turn into negative waits, or into
// waits that depend on NaN arithmetic.
func checkExponential(b *cbackoff.ExponentialBackOff) error {
	switch {
	case !(b.RandomizationFactor >= 0 && b.RandomizationFactor <= 1):
		return refuse("RandomizationFactor", b.RandomizationFactor, "must be in [0, 1]: v4 would wait less than 0")
	case b.InitialInterval < 0:
		return refuse("InitialInterval", b.InitialInterval, "must not be negative")
	case b.MaxInterval < 0:
		return refuse("MaxInterval", b.MaxInterval, "must not be negative")
	case !(b.Multiplier >= 0 && b.Multiplier <= math.MaxFloat64):
		return refuse("Multiplier", b.Multiplier, "must be a finite number, not negative")
	}
	return nil
}

// checkGrowth refuses the schedules v4 makes of a positive InitialInterval
// that no schedule here expresses.
func checkGrowth(b *cbackoff.ExponentialBackOff) error {
	switch {
	case b.Multiplier == 0:
		return refuse("Multiplier", 0.0, "v4 would wait InitialInterval once, then 0 before every later attempt: "+
			"set it (v4's default is 1.5)")
	case b.MaxInterval == 0:
		return refuse("MaxInterval", time.Duration(0), "v4 would wait InitialInterval once, then 0 before every later attempt: "+
			"set it (v4's default is 60s)")
	case b.Multiplier < 1:
		return refuse("Multiplier", b.Multiplier, "v4's waits would shrink: use at least 1")
	case b.MaxInterval < b.InitialInterval:
		return refuse("MaxInterval", b.MaxInterval, "v4 would wait InitialInterval ("+b.InitialInterval.String()+
			") once, then MaxInterval: use at least InitialInterval")
	}
	return nil
}

// next is v4's step from the interval d (ExponentialBackOff's
// incrementCurrentInterval): MaxInterval once d·Multiplier would reach it,
// else d·Multiplier truncated to a nanosecond.
func next(b *cbackoff.ExponentialBackOff, d time.Duration) time.Duration {
	if float64(d) >= float64(b.MaxInterval)/b.Multiplier {
		return b.MaxInterval
	}
	return time.Duration(float64(d) * b.Multiplier)
}

func refuse(field string, value any, reason string) error {
	return argerr.New("cenkalti.From", fmt.Sprintf("ExponentialBackOff{%s: %v}", field, value), reason)
}
