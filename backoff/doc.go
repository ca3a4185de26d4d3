// Package backoff provides retry schedules: the nominal delay that follows a
// failed attempt, as a pure function of the attempt's number.
//
// A schedule holds no state. Delay(n) always returns the same value for the
// same n, so one schedule can be shared by any number of goroutines and calls,
// and there is nothing to reset. Randomisation is not a schedule's job: the
// jitter package spreads a nominal delay, with randomness the caller supplies.
//
// Attempts are numbered from 1: Delay(1) is the wait after the first attempt
// failed, before the second. Numbers below 1 are treated as 1. Every schedule
// saturates at its MaxDelay (or at the largest time.Duration) instead of
// overflowing, however large n grows.
//
//	| schedule    | delay after attempt n              | zero values                               |
//	|-------------|------------------------------------|-------------------------------------------|
//	| Constant(d) | d                                  | Constant(0): retry at once                |
//	| Linear      | min(MaxDelay, Base + Step*(n-1))   | Step 0: constant Base; MaxDelay 0: no cap |
//	| Exponential | min(MaxDelay, Base * Factor^(n-1)) | Factor 0: 2; MaxDelay 0: no cap           |
//	| Func(f)     | f(n)                               | nil: invalid (Validate), waits 0          |
//
// "No cap" means the schedule saturates at the largest time.Duration; the retry
// policy's MaxDelay still bounds every wait the retry loop sleeps.
//
// The retry package's default schedule is Exponential{Base: 100ms, Factor: 2,
// MaxDelay: 10s}.
//
// Schedules validate themselves (Validate) instead of panicking. The error
// names the field and its value, and matches retry.ErrInvalid; retry.New
// calls Validate and reports a bad schedule as a *retry.InvalidError.
package backoff
