// Package cenkalti adapts between this module and
// github.com/cenkalti/backoff/v4, so that code can move from one to the other
// one call site at a time.
//
// BackOff turns a schedule and a jitter of this module into a v4 BackOff, for
// code that still calls backoff.Retry. From turns a configured v4 BackOff into
// a schedule and a jitter, for code that moves to retry.Do. Classify
// recognises v4's backoff.Permanent marker, so that errors marked for v4 stop
// the retry loop as they stopped v4's.
//
// From converts exactly what v4 does, and refuses, with an error matching
// retry.ErrInvalid, a configuration whose v4 schedule no schedule here
// expresses:
//
//	| v4 BackOff                            | schedule, jitter                                       |
//	|---------------------------------------|--------------------------------------------------------|
//	| *ExponentialBackOff                   | Exponential{InitialInterval, Multiplier, MaxInterval}, |
//	|                                       | Proportional(RandomizationFactor); but:                |
//	| - InitialInterval 0                   | Constant(0): v4 never waits                            |
//	| - Multiplier 1, or an InitialInterval | Constant(InitialInterval): v4's first step             |
//	|   too small for Multiplier to move    | leaves it where it is, and so does every later one     |
//	| - Multiplier 0, or MaxInterval 0      | refused: v4 waits InitialInterval once, then 0         |
//	|                                       | before every later attempt                             |
//	| - Multiplier between 0 and 1          | refused: v4's waits shrink                             |
//	| - MaxInterval below InitialInterval   | refused: v4 waits InitialInterval, then MaxInterval    |
//	| *ConstantBackOff                      | Constant(Interval), None                               |
//	| *ZeroBackOff                          | Constant(0), None                                      |
//	| *StopBackOff, wrappers, nil           | refused, saying what to use instead                    |
//
// Two differences remain, both too small to see. v4 truncates its interval to
// a whole nanosecond at every step, where Exponential computes
// InitialInterval·Multiplier^(n-1) at once: the two differ by less than
// 1/(InitialInterval·(Multiplier-1)), InitialInterval in nanoseconds, of the
// wait (four parts in a billion with v4's defaults, none with a Multiplier
// of 2). And v4 draws its randomized interval from [d·(1-f), d·(1+f)], both
// ends included, where Proportional draws from [d·(1-f), d·(1+f)).
//
// From converts the schedule only. The limits are options of the retry
// package: ExponentialBackOff.MaxElapsedTime (15 minutes by default in v4)
// becomes retry.WithMaxElapsed (when Stop is backoff.Stop, as
// NewExponentialBackOff sets it: with another Stop value v4 never stops), and
// backoff.WithMaxRetries(b, n) becomes retry.WithMaxAttempts(n+1).
//
// v4's Retry returns the error a PermanentError wraps; retry.Do returns its
// *retry.Error, whose Last is the marked error (errors.Is and errors.As see
// through both).
package cenkalti
