package cenkalti_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	cbackoff "github.com/cenkalti/backoff/v4"
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/backoff/cenkalti"
)

func ExampleFrom() {
	// An existing v4 configuration moves to retry.Do unchanged.
	v4 := cbackoff.NewExponentialBackOff()
	v4.InitialInterval = time.Millisecond
	schedule, spread, err := cenkalti.From(v4)
	if err != nil {
		fmt.Println(err)
		return
	}
	calls := 0
	err = retry.Do(context.Background(), func(context.Context) error {
		if calls++; calls < 3 {
			return fmt.Errorf("transient")
		}
		return nil
	}, retry.WithBackoff(schedule), retry.WithJitter(spread), retry.WithMaxElapsed(v4.MaxElapsedTime))
	fmt.Println(err, calls)
	// Output: <nil> 3
}

func ExampleBackOff() {
	// Code that still calls v4's Retry can use a schedule of this module.
	b := cenkalti.BackOff(backoff.Exponential{Base: 100 * time.Millisecond, MaxDelay: time.Second}, nil)
	fmt.Println(b.NextBackOff(), b.NextBackOff(), b.NextBackOff())
	// Output: 100ms 200ms 400ms
}

func ExampleClassify() {
	// An operation written for v4 marks what must not be retried.
	calls := 0
	charge := func(context.Context) error {
		calls++
		return cbackoff.Permanent(errors.New("card declined"))
	}
	err := retry.Do(context.Background(), charge, retry.WithClassifier(cenkalti.Classify))
	fmt.Println(calls, errors.Is(err, retry.ErrPermanent))
	fmt.Println(cenkalti.Classify(err))
	// Output:
	// 1 true
	// stop (marked permanent)
}

func ExampleFrom_refused() {
	// A struct literal without a Multiplier: v4 waits 1ms once, then 0 before
	// every later attempt. From refuses it rather than guess.
	_, _, err := cenkalti.From(&cbackoff.ExponentialBackOff{InitialInterval: time.Millisecond, MaxInterval: time.Second})
	fmt.Println(err)
	// Output:
	// cenkalti.From(ExponentialBackOff{Multiplier: 0}): v4 would wait InitialInterval once, then 0 before every later attempt: set it (v4's default is 1.5)
}
