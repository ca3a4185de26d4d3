package bench

import (
	"context"
	"errors"
	"time"

	avast "github.com/avast/retry-go/v5"
	backoff4 "github.com/cenkalti/backoff/v4"
	backoff7 "github.com/cenkalti/backoff/v7"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	sethretry "github.com/sethvargo/go-retry"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/jitter"
)

// The policies every implementation is given, each in its own idiom. The
// success policy is the library's default: 3 attempts, exponential from
// 100 ms doubling to 10 s, with the library's own jitter. The flaky policy
// retries at once, so that the cost of an attempt is not hidden by a wait:
// 3 attempts, a constant 1 ns delay, no jitter.
const (
	attempts     = 3
	successBase  = 100 * time.Millisecond
	successCap   = 10 * time.Second
	flakyDelay   = time.Nanosecond
	cenkaltiRand = 0.5 // cenkalti's only jitter: ±50 %, its default
)

// errTransient is what a failing attempt returns: an error no classifier
// knows, which every library retries by default.
var errTransient = errors.New("transient")

// errTransientSeth is errTransient marked for sethvargo/go-retry, which
// retries only marked errors. It is marked once, as a caller would mark a
// sentinel, so the mark costs nothing per attempt.
var errTransientSeth = sethretry.RetryableError(errTransient)

// The operations that succeed at once, in each library's signature. They are
// functions, not closures, so no implementation pays for capturing anything.
func succeed(context.Context) error   { return nil }
func succeedNoCtx() error             { return nil }
func succeedValue() (struct{}, error) { return struct{}{}, nil }

// opDirect is the operation behind a func value, as every library holds it,
// so that "plain" measures a real indirect call and not an inlined nothing.
var opDirect = func() func(context.Context) error { return succeed }()

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// --- the success policy ---

func successRetry() *retry.Retrier { return must(retry.New()) } // the defaults are the success policy

func successCenkalti4() backoff4.BackOff {
	return backoff4.WithMaxRetries(backoff4.NewExponentialBackOff(
		backoff4.WithInitialInterval(successBase),
		backoff4.WithMultiplier(2),
		backoff4.WithMaxInterval(successCap),
		backoff4.WithMaxElapsedTime(0),
	), attempts-1)
}

func successCenkalti7() []backoff7.RetryOption {
	return []backoff7.RetryOption{
		backoff7.WithBackOff(&backoff7.ExponentialBackOff{
			InitialInterval:     successBase,
			RandomizationFactor: cenkaltiRand,
			Multiplier:          2,
			MaxInterval:         successCap,
		}),
		backoff7.WithMaxTries(attempts),
		backoff7.WithMaxElapsedTime(0),
	}
}

func successAvast() *avast.Retrier {
	return avast.New(
		avast.Attempts(attempts),
		avast.Delay(successBase),
		avast.MaxDelay(successCap),
		avast.DelayType(avast.FullJitterBackoffDelay),
		avast.LastErrorOnly(true),
	)
}

// successSeth is built for every call: a go-retry Backoff counts its own
// attempts, so one shared by two calls would share their count.
func successSeth() sethretry.Backoff {
	return sethretry.WithMaxRetries(attempts-1,
		sethretry.WithFullJitter(sethretry.WithCappedDuration(successCap, sethretry.NewExponential(successBase))))
}

func successFailsafe() failsafe.Executor[any] {
	return failsafe.With[any](retrypolicy.NewBuilder[any]().
		WithMaxAttempts(attempts).
		WithBackoff(successBase, successCap).
		WithJitterFactor(cenkaltiRand).
		Build())
}

// --- the flaky policy ---

func flakyRetry() *retry.Retrier {
	return must(retry.New(
		retry.WithMaxAttempts(attempts),
		retry.WithBackoff(backoff.Constant(flakyDelay)),
		retry.WithJitter(jitter.None{}),
		// Every call fails twice, which the default budget would soon refuse;
		// the peers have no budget, and the case measures the retry loop.
		retry.WithoutBudget(),
	))
}

func flakyCenkalti4() backoff4.BackOff {
	return backoff4.WithMaxRetries(backoff4.NewConstantBackOff(flakyDelay), attempts-1)
}

func flakyCenkalti7() []backoff7.RetryOption {
	return []backoff7.RetryOption{
		backoff7.WithBackOff(backoff7.NewConstantBackOff(flakyDelay)),
		backoff7.WithMaxTries(attempts),
		backoff7.WithMaxElapsedTime(0),
	}
}

func flakyAvast() *avast.Retrier {
	return avast.New(
		avast.Attempts(attempts),
		avast.Delay(flakyDelay),
		avast.DelayType(avast.FixedDelay),
		avast.LastErrorOnly(true),
	)
}

func flakySeth() sethretry.Backoff {
	return sethretry.WithMaxRetries(attempts-1, sethretry.NewConstant(flakyDelay))
}

func flakyFailsafe() failsafe.Executor[any] {
	return failsafe.With[any](retrypolicy.NewBuilder[any]().
		WithMaxAttempts(attempts).
		WithDelay(flakyDelay).
		Build())
}

// plainRetry is the loop people write by hand: no classification, no jitter.
func plainRetry(ctx context.Context, op func(context.Context) error) error {
	var err error
	for i := range attempts {
		if i > 0 {
			time.Sleep(flakyDelay)
		}
		if err = op(ctx); err == nil {
			return nil
		}
	}
	return err
}
