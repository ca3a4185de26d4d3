package jitter_test

import (
	"fmt"
	"time"

	"github.com/retrykit/retry/jitter"
)

func ExampleFull() {
	// A jitter is a pure function: the random number is an argument, so the
	// result is reproducible. 1<<63 is the middle of the uint64 range.
	fmt.Println(jitter.Full{}.Apply(time.Second, 0, 1<<63))
	fmt.Println(jitter.Full{}.Apply(time.Second, 0, 0))
	// Output:
	// 500ms
	// 0s
}

func ExampleDecorrelated() {
	j := jitter.Decorrelated{Base: 100 * time.Millisecond, MaxDelay: 2 * time.Second}
	src := jitter.NewSeeded(1)
	prev := time.Duration(0)
	for range 5 {
		prev = j.Apply(0, prev, src.Uint64())
		fmt.Println(prev.Round(time.Millisecond))
	}
	// Output:
	// 213ms
	// 503ms
	// 1.467s
	// 2s
	// 2s
}

func ExampleProportional() {
	// cenkalti/backoff's RandomizationFactor 0.5: ±50% around the nominal delay.
	j := jitter.Proportional(0.5)
	fmt.Println(j.Apply(time.Second, 0, 0), j.Apply(time.Second, 0, 1<<63))
	// Output: 500ms 1s
}

func ExampleNewSeeded() {
	a, b := jitter.NewSeeded(42), jitter.NewSeeded(42)
	fmt.Println(a.Uint64() == b.Uint64())
	// Output: true
}
